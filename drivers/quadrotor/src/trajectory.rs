//! Where the quadrotor should be: a hover point, a list of waypoints, a figure-eight, or a
//! piecewise polynomial ([`crate::polynomial`]).

use std::f64::consts::TAU;

use nalgebra::Vector3;
use serde::Deserialize;

use crate::reference::Reference;

/// The plane a figure-eight lies in.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Plane {
    /// x–y: a lemniscate at constant height.
    Horizontal,
    /// x–z: a lemniscate standing up.
    Vertical,
}

/// A figure-eight (Gerono lemniscate) flown at constant yaw rate:
/// `u = a·sin(2πt/T)`, `w = (b/2)·sin(4πt/T)` about `center`, u along x and w along y
/// (horizontal) or z (vertical); yaw `yaw_rate·t`. It starts at `start` s; before, the
/// quadrotor holds the centre.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Figure8 {
    /// The plane.
    pub plane: Plane,
    /// Centre (m).
    pub center: [f64; 3],
    /// Half-width a and full height b of the eight (m).
    pub size: [f64; 2],
    /// Period T (s).
    pub period: f64,
    /// Constant yaw rate (rad/s).
    #[serde(default)]
    pub yaw_rate: f64,
    /// When the eight starts (s of simulated time).
    #[serde(default)]
    pub start: f64,
}

impl Figure8 {
    /// The reference at time `t`.
    pub fn at(&self, t: f64) -> Reference {
        let c = Vector3::from(self.center);
        if t < self.start {
            return Reference::hold(c, 0.0);
        }
        let s = t - self.start;
        let w = TAU / self.period;
        let [a, b] = self.size;
        let (u, du, ddu, dddu) = (
            a * (w * s).sin(),
            a * w * (w * s).cos(),
            -a * w * w * (w * s).sin(),
            -a * w * w * w * (w * s).cos(),
        );
        let h = b / 2.0;
        let (v, dv, ddv, dddv) = (
            h * (2.0 * w * s).sin(),
            2.0 * h * w * (2.0 * w * s).cos(),
            -4.0 * h * w * w * (2.0 * w * s).sin(),
            -8.0 * h * w * w * w * (2.0 * w * s).cos(),
        );
        let lift = |x: f64, y: f64| match self.plane {
            Plane::Horizontal => Vector3::new(x, y, 0.0),
            Plane::Vertical => Vector3::new(x, 0.0, y),
        };
        Reference {
            position: c + lift(u, v),
            velocity: lift(du, dv),
            acceleration: lift(ddu, ddv),
            jerk: lift(dddu, dddv),
            yaw: self.yaw_rate * s,
            yaw_rate: self.yaw_rate,
        }
    }
}

/// What to fly.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Trajectory {
    /// Hold a point (and yaw, rad).
    Hover {
        /// The point (m).
        position: [f64; 3],
        /// Yaw (rad).
        #[serde(default)]
        yaw: f64,
    },
    /// Fly to each point in turn at up to `speed`, holding each for `dwell` s.
    Waypoints {
        /// The points (m).
        points: Vec<[f64; 3]>,
        /// Cruise speed (m/s).
        #[serde(default = "d_speed")]
        speed: f64,
        /// Time at each point (s).
        #[serde(default)]
        dwell: f64,
        /// Start over after the last point.
        #[serde(default)]
        looped: bool,
    },
    /// A figure-eight.
    Figure8(Figure8),
    /// A piecewise polynomial (Crazyswarm's and the Crazyflie firmware's format).
    Polynomial(crate::polynomial::Polynomial),
}

fn d_speed() -> f64 {
    1.0
}

impl Trajectory {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), String> {
        // Positions within ±1e5 m, everything else within the shared rate limit: beyond
        // them the reference overflows or the airframe cannot represent it.
        let c = ssx_sdk::limits::COORDINATE;
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite() && x.abs() <= c);
        match self {
            Trajectory::Hover { position, yaw } if finite(position) && yaw.is_finite() => Ok(()),
            Trajectory::Waypoints {
                points,
                speed,
                dwell,
                ..
            } if !points.is_empty()
                && points.iter().all(|p| finite(p))
                && *speed > 0.0
                && speed.is_finite()
                && *dwell >= 0.0 =>
            {
                Ok(())
            }
            Trajectory::Figure8(f)
                if finite(&f.center)
                    && f.size.iter().all(|x| *x > 0.0 && x.is_finite())
                    && f.period > 0.0
                    && finite(&[f.yaw_rate, f.start]) =>
            {
                Ok(())
            }
            Trajectory::Polynomial(p) => p.validate(),
            _ => Err(format!(
                "invalid descriptor: the trajectory needs numbers from -{c} to {c}, a positive speed, size and period, and at least one waypoint"
            )),
        }
    }

    /// The stretch of simulated time a tracking error is measured over: `laps` periods of a
    /// figure-eight from its start, a polynomial once from its start; none for the others.
    pub fn window(&self, laps: f64) -> Option<(f64, f64)> {
        match self {
            Trajectory::Figure8(f) => Some((f.start, f.start + laps * f.period)),
            Trajectory::Polynomial(p) => Some((p.start, p.start + p.duration())),
            _ => None,
        }
    }

    /// The reference at time `t`.
    pub fn at(&self, t: f64) -> Reference {
        match self {
            Trajectory::Hover { position, yaw } => Reference::hold((*position).into(), *yaw),
            Trajectory::Figure8(f) => f.at(t),
            Trajectory::Polynomial(p) => p.at(t),
            Trajectory::Waypoints {
                points,
                speed,
                dwell,
                looped,
            } => {
                // Legs at constant speed from point to point, a dwell at each.
                let mut t = t;
                let n = points.len();
                let leg = |i: usize| {
                    let a = Vector3::from(points[i]);
                    let b = Vector3::from(points[(i + 1) % n]);
                    (a, b, (b - a).norm() / speed)
                };
                let cycle: f64 = (0..n).map(|i| leg(i).2 + dwell).sum();
                if *looped && n > 1 && cycle > 0.0 {
                    t %= cycle;
                }
                for (i, point) in points.iter().enumerate() {
                    if t < *dwell {
                        return Reference::hold((*point).into(), 0.0);
                    }
                    t -= dwell;
                    if i + 1 == n && !looped {
                        break;
                    }
                    let (a, b, duration) = leg(i);
                    if t < duration {
                        let dir = (b - a) / (b - a).norm();
                        let mut r = Reference::hold(a + dir * (*speed * t), 0.0);
                        r.velocity = dir * *speed;
                        return r;
                    }
                    t -= duration;
                }
                Reference::hold(points[n - 1].into(), 0.0)
            }
        }
    }
}
