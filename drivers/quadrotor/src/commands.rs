//! Open-loop command schedules, flown instead of a trajectory to put the same command sequence
//! through ssx's quadrotor and through another model (docs/robots.md, "Checked against
//! identified models"): rows `[t, …]`, each held from its time until the next row's (before the
//! first row, the first row).
//!
//! - `{"attitude": [[t, roll, pitch, yaw, thrust], …]}` (rad, N): the Crazyflie firmware's
//!   attitude mode, as drone-models' `so_rpy` models take it: the inner loop holds roll and pitch,
//!   the yaw angle is reached through a yaw rate (`position.kyaw` times the yaw error, from motion
//!   capture), the thrust is collective;
//! - `{"rotors": [[t, ω₁, ω₂, ω₃, ω₄], …]}` (rad/s, the airframe's rotor order): no controller,
//!   the speeds go to the motors (within the speed limits).

use serde::Deserialize;

/// A schedule.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Commands {
    /// Rows `[t, roll, pitch, yaw, thrust]`.
    Attitude(Vec<[f64; 5]>),
    /// Rows `[t, ω₁, ω₂, ω₃, ω₄]`.
    Rotors(Vec<[f64; 5]>),
}

/// What the schedule asks at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// Roll, pitch, yaw (rad) and collective thrust (N).
    Attitude([f64; 4]),
    /// Rotor speeds (rad/s).
    Rotors([f64; 4]),
}

impl Commands {
    fn rows(&self) -> &[[f64; 5]] {
        match self {
            Commands::Attitude(r) | Commands::Rotors(r) => r,
        }
    }

    /// Checks the rows: at least one, finite, times not decreasing, thrust and speeds >= 0.
    pub fn validate(&self) -> Result<(), String> {
        let rows = self.rows();
        if rows.is_empty() {
            return Err("invalid descriptor: 'commands' needs at least one row".into());
        }
        for (i, row) in rows.iter().enumerate() {
            if !row.iter().all(|x| x.is_finite()) {
                return Err(format!(
                    "invalid descriptor: 'commands' row {i} has a number that is not finite"
                ));
            }
            if i > 0 && row[0] < rows[i - 1][0] {
                return Err(format!(
                    "invalid descriptor: 'commands' row {i}: time {} is before the row above's {}",
                    row[0],
                    rows[i - 1][0]
                ));
            }
            let negative = match self {
                Commands::Attitude(_) => row[4] < 0.0,
                Commands::Rotors(_) => row[1..].iter().any(|w| *w < 0.0),
            };
            if negative {
                return Err(format!(
                    "invalid descriptor: 'commands' row {i}: thrust and rotor speeds must be >= 0"
                ));
            }
        }
        Ok(())
    }

    /// The command at time `t` (s).
    pub fn at(&self, t: f64) -> Command {
        let rows = self.rows();
        // Simulated time is a sum of steps: a row at 0.5 s applies from the step whose time
        // rounds to it.
        let i = rows.iter().rposition(|r| r[0] <= t + 1e-9).unwrap_or(0);
        let [_, a, b, c, d] = rows[i];
        match self {
            Commands::Attitude(_) => Command::Attitude([a, b, c, d]),
            Commands::Rotors(_) => Command::Rotors([a, b, c, d]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_until_the_next_and_bad_rows_are_named() {
        let c: Commands =
            serde_json::from_str(r#"{ "attitude": [[0, 0, 0, 0, 0.3], [0.5, 0.2, 0, 0, 0.31]] }"#)
                .unwrap();
        c.validate().unwrap();
        assert_eq!(c.at(0.0), Command::Attitude([0.0, 0.0, 0.0, 0.3]));
        assert_eq!(c.at(0.4999), Command::Attitude([0.0, 0.0, 0.0, 0.3]));
        assert_eq!(c.at(0.5 - 1e-12), Command::Attitude([0.2, 0.0, 0.0, 0.31]));
        assert_eq!(c.at(9.0), Command::Attitude([0.2, 0.0, 0.0, 0.31]));
        let bad: Commands =
            serde_json::from_str(r#"{ "rotors": [[1, 5, 5, 5, 5], [0.5, 5, 5, 5, -1]] }"#).unwrap();
        assert_eq!(
            bad.validate().unwrap_err(),
            "invalid descriptor: 'commands' row 1: time 0.5 is before the row above's 1"
        );
    }
}
