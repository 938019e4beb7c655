//! A piecewise polynomial trajectory in the Crazyflie firmware's and Crazyswarm's format: pieces
//! of `[duration, x⁰…x⁷, y⁰…y⁷, z⁰…z⁷, yaw⁰…yaw⁷]` (33 numbers, a row of Crazyswarm's
//! `figure8.csv`), each polynomial in the time since its piece began, flown once from `start`,
//! shifted by `offset` and slowed by `timescale` (Crazyswarm's `startTrajectory(timescale=…)`:
//! 2 flies it at half speed). Before `start` the reference holds the first point, after the end
//! the last.

use nalgebra::Vector3;
use serde::Deserialize;

use crate::reference::Reference;

/// Numbers in one piece: its duration and four polynomials of degree 7.
pub const PIECE: usize = 33;

/// The trajectory.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Polynomial {
    /// The pieces, `PIECE` numbers each.
    pub pieces: Vec<Vec<f64>>,
    /// Added to every point (m).
    #[serde(default)]
    pub offset: [f64; 3],
    /// When it starts (s of simulated time).
    #[serde(default)]
    pub start: f64,
    /// Seconds of flight per second of the trajectory's own time.
    #[serde(default = "one")]
    pub timescale: f64,
}

fn one() -> f64 {
    1.0
}

/// p(s), p'(s), p''(s), p'''(s) of a polynomial with coefficients `c` (lowest degree first).
fn eval(c: &[f64], s: f64) -> [f64; 4] {
    let (mut p, mut d, mut dd, mut ddd) = (0.0, 0.0, 0.0, 0.0);
    for &ci in c.iter().rev() {
        ddd = ddd * s + 3.0 * dd;
        dd = dd * s + 2.0 * d;
        d = d * s + p;
        p = p * s + ci;
    }
    [p, d, dd, ddd]
}

impl Polynomial {
    /// How long it is (s of flight).
    pub fn duration(&self) -> f64 {
        self.pieces.iter().map(|p| p[0]).sum::<f64>() * self.timescale
    }

    /// Checks the pieces: `PIECE` finite numbers each, positive durations, positive timescale.
    pub fn validate(&self) -> Result<(), String> {
        if self.pieces.is_empty() {
            return Err(
                "invalid descriptor: a polynomial trajectory needs at least one piece".into(),
            );
        }
        for (i, p) in self.pieces.iter().enumerate() {
            if p.len() != PIECE {
                return Err(format!(
                    "invalid descriptor: polynomial piece {i} has {} numbers, not {PIECE} (duration, then 8 coefficients each of x, y, z and yaw)",
                    p.len()
                ));
            }
            if !(p.iter().all(|x| x.is_finite()) && p[0] > 0.0) {
                return Err(format!(
                    "invalid descriptor: polynomial piece {i} needs finite numbers and a duration > 0"
                ));
            }
        }
        let finite = self
            .offset
            .iter()
            .chain([&self.start])
            .all(|x| x.is_finite());
        if !(finite && self.timescale.is_finite() && self.timescale > 0.0) {
            return Err("invalid descriptor: a polynomial trajectory needs a finite offset and start and a timescale > 0".into());
        }
        Ok(())
    }

    /// The reference at time `t`.
    pub fn at(&self, t: f64) -> Reference {
        let k = self.timescale;
        let mut s = ((t - self.start) / k).max(0.0);
        let last = self.pieces.len() - 1;
        let mut index = last;
        for (i, p) in self.pieces.iter().enumerate() {
            if s <= p[0] || i == last {
                index = i;
                break;
            }
            s -= p[0];
        }
        let p = &self.pieces[index];
        let s = s.min(p[0]);
        // Past the end, or before the start: hold still there.
        let moving = t >= self.start && (index < last || s < p[0]);
        let axis = |a: usize| eval(&p[1 + 8 * a..9 + 8 * a], s);
        let [x, y, z, yaw] = [axis(0), axis(1), axis(2), axis(3)];
        let offset = Vector3::from(self.offset);
        let position = Vector3::new(x[0], y[0], z[0]) + offset;
        if !moving {
            return Reference::hold(position, yaw[0]);
        }
        Reference {
            position,
            velocity: Vector3::new(x[1], y[1], z[1]) / k,
            acceleration: Vector3::new(x[2], y[2], z[2]) / (k * k),
            jerk: Vector3::new(x[3], y[3], z[3]) / (k * k * k),
            yaw: yaw[0],
            yaw_rate: yaw[1] / k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x = s² over 2 s, y = 1 + s, z = 2, yaw = 0.1·s, then a piece holding its end.
    fn two_pieces(timescale: f64) -> Polynomial {
        let mut a = vec![0.0; PIECE];
        a[0] = 2.0;
        a[1 + 2] = 1.0; // x: s²
        a[9] = 1.0; // y: 1 + s
        a[10] = 1.0;
        a[17] = 2.0; // z: 2
        a[26] = 0.1; // yaw: 0.1·s
        let mut b = vec![0.0; PIECE];
        b[0] = 1.0;
        b[1] = 4.0;
        b[9] = 3.0;
        b[17] = 2.0;
        b[25] = 0.2;
        Polynomial {
            pieces: vec![a, b],
            offset: [10.0, 0.0, 0.0],
            start: 1.0,
            timescale,
        }
    }

    #[test]
    fn pieces_are_evaluated_with_their_derivatives_in_their_own_time_and_scaled() {
        let p = two_pieces(1.0);
        p.validate().unwrap();
        assert_eq!(p.duration(), 3.0);
        // 1.5 s into the first piece.
        let r = p.at(2.5);
        assert!((r.position - Vector3::new(12.25, 2.5, 2.0)).norm() < 1e-12);
        assert!((r.velocity - Vector3::new(3.0, 1.0, 0.0)).norm() < 1e-12);
        assert!((r.acceleration - Vector3::new(2.0, 0.0, 0.0)).norm() < 1e-12);
        assert!((r.yaw - 0.15).abs() < 1e-12 && (r.yaw_rate - 0.1).abs() < 1e-12);
        // Before the start and after the end it holds still.
        assert_eq!(
            p.at(0.0),
            Reference::hold(Vector3::new(10.0, 1.0, 2.0), 0.0)
        );
        assert_eq!(
            p.at(9.0),
            Reference::hold(Vector3::new(14.0, 3.0, 2.0), 0.2)
        );
        // Twice as slow: the same point at twice the time, half the velocity.
        let slow = two_pieces(2.0);
        assert_eq!(slow.duration(), 6.0);
        let r = slow.at(1.0 + 3.0);
        assert!((r.position - Vector3::new(12.25, 2.5, 2.0)).norm() < 1e-12);
        assert!((r.velocity - Vector3::new(1.5, 0.5, 0.0)).norm() < 1e-12);
        assert!((r.acceleration - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-12);
    }

    #[test]
    fn a_cubic_has_its_three_derivatives() {
        // 1 + 2s + 3s² + 4s³ at s = 2: 49, then 2 + 6s + 12s² = 62, 6 + 24s = 54, 24.
        assert_eq!(eval(&[1.0, 2.0, 3.0, 4.0], 2.0), [49.0, 62.0, 54.0, 24.0]);
    }

    #[test]
    fn a_piece_of_the_wrong_length_is_named() {
        let mut p = two_pieces(1.0);
        p.pieces[1].pop();
        assert_eq!(
            p.validate().unwrap_err(),
            "invalid descriptor: polynomial piece 1 has 32 numbers, not 33 (duration, then 8 coefficients each of x, y, z and yaw)"
        );
    }
}
