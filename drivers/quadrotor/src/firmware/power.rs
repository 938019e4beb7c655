//! The firmware's legacy power distribution (`power_distribution_quadrotor.c`) and what a
//! motor command asks of a motor with battery compensation on (`motors.c`,
//! `motorsCompensateBatteryVoltage`; the defaults in `platform_defaults_cf2.h`).

/// The Crazyflie 2.x's motors M1..M4: hub directions (x, y) in units of the arm over √2, body
/// frame (x forward, y left), and the sign of each rotor's drag torque about z. Read from the
/// firmware's force-torque distribution: a roll torque takes from M1 and M2 and gives to M3 and
/// M4 (so M1, M2 are on the right, -y), a pitch torque gives to M2 and M3 (at the back), a yaw
/// torque gives to M2 and M4 (whose drag turns the body +z).
pub const HUBS: [(f64, f64, f64); 4] = [
    (1.0, -1.0, -1.0),
    (-1.0, -1.0, 1.0),
    (-1.0, 1.0, -1.0),
    (1.0, 1.0, 1.0),
];

/// `THRUST_MAX`: a motor's thrust at command 65535 (N).
pub const THRUST_MAX: f64 = 0.12;
/// `THRUST_MIN`: below it a motor is given nothing (N).
pub const THRUST_MIN: f64 = 0.012817578393224994;

/// The collective thrust command (16-bit units, 0 to 65535) that asks four motors for
/// `newtons` in all: each motor's share of its [`THRUST_MAX`] at 65535.
pub fn thrust_command(newtons: f64) -> f64 {
    (newtons / (4.0 * THRUST_MAX) * 65535.0).clamp(0.0, 65535.0)
}

/// What the attitude loop hands the power distribution (`control_t`, legacy mode).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Control {
    /// Collective thrust (16-bit units).
    pub thrust: f64,
    /// Roll command.
    pub roll: i16,
    /// Pitch command (legacy: positive noses up).
    pub pitch: i16,
    /// Yaw command.
    pub yaw: i16,
}

/// The four motors' thrusts (N), M1..M4: each command is the thrust less half the roll and
/// plus half the pitch on M1, and so on by the motor's place; all lowered alike when the
/// largest passes 65535 (`powerDistributionCap`); none below 0, and a command asking less than
/// [`THRUST_MIN`] gives nothing. The firmware caps after battery compensation, in PWM; with
/// a full battery that is the same as capping the command, which is what is done here.
pub fn motor_thrusts(c: &Control) -> [f64; 4] {
    if c.thrust == 0.0 {
        return [0.0; 4];
    }
    let r = (f64::from(c.roll) / 2.0) as i16 as f64;
    let p = (f64::from(c.pitch) / 2.0) as i16 as f64;
    let y = f64::from(c.yaw);
    let t = c.thrust;
    // Stored as 32-bit integers: truncated towards zero.
    let uncapped = [t - r + p + y, t - r - p - y, t + r - p + y, t + r + p - y].map(|m| m.trunc());
    let highest = uncapped.iter().cloned().fold(0.0, f64::max);
    let reduction = (highest - 65535.0).max(0.0);
    uncapped.map(|m| {
        let thrust = (m - reduction).max(0.0) / 65535.0 * THRUST_MAX;
        if thrust < THRUST_MIN { 0.0 } else { thrust }
    })
}

#[cfg(test)]
mod tests {
    use super::{Control, THRUST_MAX, motor_thrusts};

    /// The motors' thrusts for a control, as commands out of 65535.
    fn commands(thrust: f64, roll: i16, yaw: i16) -> [f64; 4] {
        let c = Control {
            thrust,
            roll,
            pitch: 0,
            yaw,
        };
        motor_thrusts(&c).map(|f| f / THRUST_MAX * 65535.0)
    }

    #[test]
    fn a_roll_command_lifts_the_left_motors_and_a_saturated_one_is_capped_together() {
        let near = |a: [f64; 4], b: [f64; 4]| a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-9);
        // Half of 2001, truncated: 1000; M1, M2 (right) lose it, M3, M4 (left) gain it.
        let f = commands(40000.0, 2001, 0);
        assert!(near(f, [39000.0, 39000.0, 41000.0, 41000.0]), "{f:?}");
        // M1, M3 at 67000 are 1465 too much: every motor is lowered by 1465.
        let f = commands(65000.0, 0, 2000);
        assert!(near(f, [65535.0, 61535.0, 65535.0, 61535.0]), "{f:?}");
    }
}
