//! The gripper's reading: what the `gripper` sensor (`libssx_sensors.so`) publishes and the
//! `diffdrive` driver's gripper (`libssx_driver_ground.so`) acts on. One layout, written once.
//!
//! | index | value | meaning |
//! |-------|-------|---------|
//! | 0 | `held` | 1 while the paddles hold a body, else 0 |
//! | 1 | `height` | the held body's lowest point above z = 0 (m); 0 when nothing is held |
//! | 2, 3 | `held_artifact`, `held_body` | what is held; −1 when nothing |
//! | 4, 5 | `between_artifact`, `between_body` | the free dynamic body between the paddles nearest their middle; −1 when none |
//! | 6 | `fit` | for that body: 0 nothing there, 1 it fits, 2 too heavy, 3 too wide |
//! | 7 | `mass` | its mass (kg); 0 when none |
//! | 8 | `width` | its width across the paddles (m); 0 when none |

/// Values in a reading.
pub const LEN: usize = 9;

/// Whether the body between the paddles can be gripped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Nothing lies between the paddles.
    Nothing = 0,
    /// It fits: closing grips it.
    Fits = 1,
    /// Heavier than the gripper's `max_mass`.
    TooHeavy = 2,
    /// Wider than the paddles' `opening`.
    TooWide = 3,
}

/// A gripper reading, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// What is held (artifact, body index), if anything.
    pub held: Option<(u32, u32)>,
    /// The held body's lowest point above z = 0 (m); 0 when nothing is held.
    pub height: f64,
    /// The free body between the paddles (artifact, body index), if any.
    pub between: Option<(u32, u32)>,
    /// Whether it fits.
    pub fit: Fit,
    /// Its mass (kg).
    pub mass: f64,
    /// Its width across the paddles (m).
    pub width: f64,
}

fn pair(p: Option<(u32, u32)>) -> [f64; 2] {
    p.map_or([-1.0, -1.0], |(a, b)| [f64::from(a), f64::from(b)])
}

fn unpair(a: f64, b: f64) -> Option<(u32, u32)> {
    let index =
        |x: f64| (x >= 0.0 && x <= f64::from(u32::MAX) && x.fract() == 0.0).then_some(x as u32);
    Some((index(a)?, index(b)?))
}

impl Reading {
    /// The numbers the sensor publishes.
    pub fn to_values(&self) -> [f64; LEN] {
        let [ha, hb] = pair(self.held);
        let [ba, bb] = pair(self.between);
        [
            f64::from(u8::from(self.held.is_some())),
            self.height,
            ha,
            hb,
            ba,
            bb,
            self.fit as u8 as f64,
            self.mass,
            self.width,
        ]
    }

    /// A published reading back; `None` when `values` is not one (wrong length or codes).
    pub fn from_values(values: &[f64]) -> Option<Reading> {
        let v: &[f64; LEN] = values.try_into().ok()?;
        let fit = match v[6] {
            0.0 => Fit::Nothing,
            1.0 => Fit::Fits,
            2.0 => Fit::TooHeavy,
            3.0 => Fit::TooWide,
            _ => return None,
        };
        Some(Reading {
            held: if v[0] == 1.0 {
                unpair(v[2], v[3])
            } else {
                None
            },
            height: v[1],
            between: unpair(v[4], v[5]),
            fit,
            mass: v[7],
            width: v[8],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_survive_the_trip_through_numbers() {
        let r = Reading {
            held: Some((3, 0)),
            height: 0.25,
            between: None,
            fit: Fit::Nothing,
            mass: 0.0,
            width: 0.0,
        };
        assert_eq!(Reading::from_values(&r.to_values()), Some(r));
        let r = Reading {
            held: None,
            height: 0.0,
            between: Some((7, 1)),
            fit: Fit::TooWide,
            mass: 1.5,
            width: 0.6,
        };
        assert_eq!(Reading::from_values(&r.to_values()), Some(r));
        assert_eq!(Reading::from_values(&[0.0; 4]), None);
        let mut bad = r.to_values();
        bad[6] = 9.0;
        assert_eq!(Reading::from_values(&bad), None);
    }
}
