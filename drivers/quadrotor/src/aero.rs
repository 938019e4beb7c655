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
//!   at most 4/3), where the formula's pole would otherwise be.
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
