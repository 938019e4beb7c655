//! Aerodynamic effects on the airframe beyond the rotors' thrust and torque, each off when its
//! coefficients are 0 or its section is absent:
//!
//! - **rotor (induced) drag**, linear in the velocity in the rotor plane and scaled by each
//!   rotor's speed: `F = −Σᵢ|ωᵢ|·λ·v⊥` (Martin & Salaün 2010; Faessler et al. 2018; RotorS's
//!   `rotor_drag_coefficient`), `v⊥` the body-frame velocity without its body-z part;
//! - **linear body drag** `F = −D·v` in body axes (the diagonal drag matrix utiasDSL's
//!   drone-models identify from flight data);
//! - **quadratic body (parasitic) drag** `Fₖ = −c_k·|v_k|·v_k` in body axes (RotorPy's `c_D`);
//! - **ground effect**, per rotor from its hub's height `z` above the ground plane
//!   (Cheeseman & Bennett 1955): `T/T∞ = 1 / (1 − (R/4z)²)`, `z` clipped at `R/2` (a ratio of
//!   at most 4/3), where the formula's pole would otherwise be;
//! - **downwash** from vehicles above, read from the artifact's `neighbours` sensor
//!   (gym-pybullet-drones' model, from experiments at UTIAS's Dynamic Systems Lab): for each
//!   neighbour `Δz > 0` above and `Δxy < 10` m aside, a force `−α·exp(−½(Δxy/β)²)` along world z,
//!   `α = c₁·(R/(4Δz))²`, `β = c₂·Δz + c₃` (gym-pybullet-drones applies it along the body's z; the
//!   same at hover). With its Crazyflie coefficients β is 0 at Δz = 0.6875 m and negative below;
//!   the formula squares it, and at β = 0 no force is applied.
//!
//! The drag forces act at the centre of mass (no moment); the air is still.

use nalgebra::{UnitQuaternion, Vector3};
use serde::Deserialize;

use crate::check::{non_negative, positive};

/// Drag coefficients (all default 0: off).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Drag {
    /// λ, rotor drag: N per (m/s) per (rad/s) of each rotor.
    #[serde(default)]
    pub rotor: f64,
    /// Linear body drag, body x, y, z: N/(m/s).
    #[serde(default)]
    pub linear: [f64; 3],
    /// Quadratic body drag, body x, y, z: N/(m/s)².
    #[serde(default)]
    pub quadratic: [f64; 3],
}

impl Drag {
    /// Checks every coefficient is finite and not negative.
    pub fn validate(&self) -> Result<(), String> {
        non_negative("drag.rotor", self.rotor)?;
        for v in self.linear {
            non_negative("drag.linear", v)?;
        }
        for v in self.quadratic {
            non_negative("drag.quadratic", v)?;
        }
        Ok(())
    }

    /// The drag force (N, body frame) at body-frame velocity `v` with rotor speeds `omega`.
    pub fn force(&self, v: &Vector3<f64>, omega: &[f64; 4]) -> Vector3<f64> {
        let spin: f64 = omega.iter().map(|w| w.abs()).sum();
        let in_plane = Vector3::new(v.x, v.y, 0.0);
        let rotor = -in_plane * (spin * self.rotor);
        let linear = -v.component_mul(&Vector3::from(self.linear));
        let quadratic = -Vector3::from_fn(|i, _| self.quadratic[i] * v[i].abs() * v[i]);
        rotor + linear + quadratic
    }
}

/// The ground effect's geometry.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GroundEffect {
    /// Rotor (propeller) radius R (m).
    pub rotor_radius: f64,
    /// Height of the ground plane (m, world z).
    #[serde(default)]
    pub ground_height: f64,
}

impl GroundEffect {
    /// Checks the radius is a finite positive length.
    pub fn validate(&self) -> Result<(), String> {
        positive("ground_effect.rotor_radius", self.rotor_radius)?;
        if !self.ground_height.is_finite() {
            return Err("invalid descriptor: 'ground_effect.ground_height' must be finite".into());
        }
        Ok(())
    }

    /// Thrust in ground effect over thrust out of it, for a rotor `height` m above the ground.
    pub fn ratio(&self, height: f64) -> f64 {
        let z = height.max(self.rotor_radius / 2.0);
        let r = self.rotor_radius / (4.0 * z);
        1.0 / (1.0 - r * r)
    }

    /// Each rotor's ratio, its hub at body-frame (x, y) of a body at `position`, `orientation`.
    pub fn gains(
        &self,
        hubs: &[[f64; 2]; 4],
        position: &Vector3<f64>,
        orientation: &UnitQuaternion<f64>,
    ) -> [f64; 4] {
        hubs.map(|[x, y]| {
            let hub = position + orientation * Vector3::new(x, y, 0.0);
            self.ratio(hub.z - self.ground_height)
        })
    }
}

/// Downwash from the vehicles above.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Downwash {
    /// The artifact's `neighbours` sensor.
    #[serde(default = "d_neighbours")]
    pub sensor: String,
    /// Rotor radius R of the vehicles above (m).
    pub rotor_radius: f64,
    /// `[c₁ (N), c₂, c₃ (m)]`.
    pub coefficients: [f64; 3],
}

fn d_neighbours() -> String {
    "neighbours".into()
}

impl Downwash {
    /// Checks the radius and the coefficients.
    pub fn validate(&self) -> Result<(), String> {
        positive("downwash.rotor_radius", self.rotor_radius)?;
        non_negative("downwash.coefficients[0]", self.coefficients[0])?;
        if !self.coefficients.iter().all(|c| c.is_finite()) {
            return Err("invalid descriptor: 'downwash.coefficients' must be finite".into());
        }
        Ok(())
    }

    /// The downward force (N, world z, ≤ 0) from a `neighbours` reading
    /// (`[n, n × (artifact, dx, dy, dz, dvx, dvy, dvz)]`, neighbour minus self).
    pub fn force(&self, neighbours: &[f64]) -> f64 {
        let [c1, c2, c3] = self.coefficients;
        let n = neighbours.first().map_or(0, |n| *n as usize);
        neighbours
            .get(1..)
            .unwrap_or(&[])
            .chunks_exact(7)
            .take(n)
            .map(|o| {
                let (dxy, dz) = ((o[1] * o[1] + o[2] * o[2]).sqrt(), o[3]);
                let beta = c2 * dz + c3;
                if dz <= 0.0 || dxy >= 10.0 || beta == 0.0 {
                    return 0.0;
                }
                let alpha = c1 * (self.rotor_radius / (4.0 * dz)).powi(2);
                -alpha * (-0.5 * (dxy / beta).powi(2)).exp()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotor_drag_is_lambda_times_the_summed_rotor_speeds_times_the_in_plane_velocity() {
        let drag = Drag {
            rotor: 8.06428e-5,
            ..Drag::default()
        };
        let omega = [500.0, 510.0, 490.0, 500.0];
        let f = drag.force(&Vector3::new(2.0, -1.0, 3.0), &omega);
        // 2000 rad/s in all: −2000 · λ · (2, −1, 0).
        let k = 2000.0 * 8.06428e-5;
        assert!((f - Vector3::new(-2.0 * k, k, 0.0)).norm() < 1e-12, "{f}");
    }

    #[test]
    fn body_drag_is_linear_and_quadratic_per_body_axis() {
        let drag = Drag {
            rotor: 0.0,
            linear: [0.0147, 0.0147, 0.0128],
            quadratic: [0.005, 0.005, 0.01],
        };
        let f = drag.force(&Vector3::new(2.0, -3.0, 0.5), &[0.0; 4]);
        let want = Vector3::new(
            -0.0147 * 2.0 - 0.005 * 4.0,
            0.0147 * 3.0 + 0.005 * 9.0,
            -0.0128 * 0.5 - 0.01 * 0.25,
        );
        assert!((f - want).norm() < 1e-12, "{f} vs {want}");
    }

    #[test]
    fn downwash_is_gym_pybullet_drones_form_for_the_vehicles_above_only() {
        let d = Downwash {
            sensor: "neighbours".into(),
            rotor_radius: 2.31348e-2,
            coefficients: [2267.18, 0.16, -0.11],
        };
        // One 1 m above and 0.1 m aside, one below, one 1 m above and 20 m aside.
        let reading = [
            3.0, 7.0, 0.1, 0.0, 1.0, 0.0, 0.0, 0.0, 8.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 9.0, 20.0,
            0.0, 1.0, 0.0, 0.0, 0.0,
        ];
        let alpha = 2267.18 * (2.31348e-2_f64 / 4.0).powi(2);
        let beta: f64 = 0.16 - 0.11;
        let want = -alpha * (-0.5 * (0.1 / beta).powi(2)).exp();
        assert!(
            (d.force(&reading) - want).abs() < 1e-12,
            "{}",
            d.force(&reading)
        );
        assert_eq!(d.force(&[0.0]), 0.0);
        assert_eq!(d.force(&[]), 0.0);
    }

    #[test]
    fn ground_effect_follows_cheeseman_bennett_and_is_clipped_at_half_a_radius() {
        let g = GroundEffect {
            rotor_radius: 0.1,
            ground_height: 0.0,
        };
        // z = R: 1 / (1 − 1/16) = 16/15.
        assert!((g.ratio(0.1) - 16.0 / 15.0).abs() < 1e-12);
        // z = 2R: 1 / (1 − 1/64).
        assert!((g.ratio(0.2) - 64.0 / 63.0).abs() < 1e-12);
        // Far away: no effect; on the ground: the clip's 4/3.
        assert!((g.ratio(10.0) - 1.0).abs() < 1e-5);
        assert!((g.ratio(0.0) - 4.0 / 3.0).abs() < 1e-12);
        assert!((g.ratio(-1.0) - 4.0 / 3.0).abs() < 1e-12);
        // A body tilted 90° about x: hubs at ±y go up and down by y.
        let q = UnitQuaternion::from_euler_angles(std::f64::consts::FRAC_PI_2, 0.0, 0.0);
        let gains = g.gains(
            &[[0.0, 0.1], [0.0, -0.1], [0.1, 0.0], [-0.1, 0.0]],
            &Vector3::new(0.0, 0.0, 0.3),
            &q,
        );
        assert!((gains[0] - g.ratio(0.4)).abs() < 1e-9 && (gains[1] - g.ratio(0.2)).abs() < 1e-9);
        assert!((gains[2] - g.ratio(0.3)).abs() < 1e-9);
    }
}
