//! The battery: a LiPo pack whose terminal voltage sags with the current drawn and with the
//! charge used, and caps the rotors' speed.
//!
//! Per step: the current `I = I_idle + I_full · P/P_max`, `P/P_max` the rotors' mechanical power
//! as a share of all four at full speed (ω³ scaling); the terminal voltage
//! `V = cells · OCV(q) − R·I`, with `OCV` the cell's open-circuit voltage at state of charge `q`
//! (linear between the table's points at 0 %, 10 %, …, 100 %) and `R` the pack's internal
//! resistance; then `q` falls by `I·Δt / capacity`. A DC motor's top speed goes with its supply
//! voltage: the rotors cannot pass `ω_max · V / V_full` (`V_full`, the pack at 100 % and no
//! load). With `compensated` (as the Crazyflie firmware's thrust-to-battery-voltage
//! compensation does) a commanded speed is met whenever it is under that cap; without it a
//! command is a duty cycle and the speed reached scales with `V / V_full`.

use serde::Deserialize;

/// The Crazyflie 2.x firmware's LiPo table (`bat671723HS25C` in `src/hal/src/pm_stm32f4.c`:
/// cell volts at 0 %, 10 %, …, 90 % charge), completed with 4.2 V at 100 %, the full-charge
/// voltage of a LiPo cell.
pub const CRAZYFLIE_CELL: [f64; 11] = [
    3.00, 3.78, 3.83, 3.87, 3.89, 3.92, 3.96, 4.00, 4.04, 4.10, 4.20,
];

/// Battery parameters.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BatteryParams {
    /// Cells in series.
    #[serde(default = "one")]
    pub cells: u32,
    /// Capacity (mAh).
    pub capacity: f64,
    /// Charge at the start (share of the capacity, 0 to 1).
    #[serde(default = "full")]
    pub charge: f64,
    /// Internal resistance of the pack (Ω).
    pub internal_resistance: f64,
    /// Current with all four rotors at `omega_max` (A).
    pub full_current: f64,
    /// Current of everything else (A).
    #[serde(default)]
    pub idle_current: f64,
    /// Whether the flight controller compensates its motor commands for the voltage.
    #[serde(default = "yes")]
    pub compensated: bool,
    /// Cell open-circuit volts at 0 %, 10 %, …, 100 % charge (11 values, rising); default
    /// [`CRAZYFLIE_CELL`].
    #[serde(default = "crazyflie")]
    pub curve: Vec<f64>,
}

fn one() -> u32 {
    1
}
fn full() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}
fn crazyflie() -> Vec<f64> {
    CRAZYFLIE_CELL.to_vec()
}

/// A battery in flight.
#[derive(Clone, Debug)]
pub struct Battery {
    params: BatteryParams,
    /// State of charge (0 to 1).
    charge: f64,
    /// Terminal voltage at the last step (V).
    voltage: f64,
    /// Current at the last step (A).
    current: f64,
}

impl Battery {
    /// A battery at its starting charge, no load.
    pub fn new(params: BatteryParams) -> Result<Self, String> {
        use crate::check::{non_negative, positive};
        positive("battery.capacity", params.capacity)?;
        positive("battery.full_current", params.full_current)?;
        if params.cells == 0 {
            return Err("invalid descriptor: 'battery.cells' must be at least 1".into());
        }
        non_negative("battery.internal_resistance", params.internal_resistance)?;
        non_negative("battery.idle_current", params.idle_current)?;
        if !(0.0..=1.0).contains(&params.charge) {
            return Err(format!(
                "invalid descriptor: 'battery.charge' must be in [0, 1], got {}",
                params.charge
            ));
        }
        let c = &params.curve;
        if c.len() != 11 || !c.windows(2).all(|w| w[1] > w[0]) || !c.iter().all(|v| *v > 0.0) {
            return Err(format!(
                "invalid descriptor: 'battery.curve' must be 11 rising cell voltages > 0 (0 %, 10 %, …, 100 %), got {c:?}"
            ));
        }
        let mut b = Battery {
            charge: params.charge,
            voltage: 0.0,
            current: 0.0,
            params,
        };
        b.voltage = b.open_circuit();
        Ok(b)
    }

    /// The pack's open-circuit voltage at the present charge (V).
    pub fn open_circuit(&self) -> f64 {
        let x = self.charge.clamp(0.0, 1.0) * 10.0;
        let i = (x.floor() as usize).min(9);
        let c = &self.params.curve;
        f64::from(self.params.cells) * (c[i] + (c[i + 1] - c[i]) * (x - i as f64))
    }

    /// The pack at 100 % and no load (V).
    pub fn full_voltage(&self) -> f64 {
        f64::from(self.params.cells) * self.params.curve[10]
    }

    /// One step of `dt` seconds with the rotors at `power_share` of full power: the current,
    /// the terminal voltage and the charge used.
    pub fn step(&mut self, power_share: f64, dt: f64) {
        let p = &self.params;
        self.current = p.idle_current + p.full_current * power_share.max(0.0);
        self.voltage = (self.open_circuit() - p.internal_resistance * self.current).max(0.0);
        self.charge = (self.charge - self.current * dt / (p.capacity * 3.6)).max(0.0);
    }

    /// Terminal voltage over full voltage: the share of `omega_max` the rotors can reach.
    pub fn speed_share(&self) -> f64 {
        self.voltage / self.full_voltage()
    }

    /// Whether commands are compensated for the voltage.
    pub fn compensated(&self) -> bool {
        self.params.compensated
    }

    /// Terminal voltage (V), current (A) and state of charge (0 to 1) now.
    pub fn reading(&self) -> (f64, f64, f64) {
        (self.voltage, self.current, self.charge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack() -> BatteryParams {
        BatteryParams {
            cells: 1,
            capacity: 250.0,
            charge: 1.0,
            internal_resistance: 0.08,
            full_current: 4.0,
            idle_current: 0.1,
            compensated: true,
            curve: CRAZYFLIE_CELL.to_vec(),
        }
    }

    #[test]
    fn the_voltage_sags_by_the_current_times_the_resistance() {
        let mut b = Battery::new(BatteryParams {
            charge: 0.55,
            ..pack()
        })
        .unwrap();
        // 55 %: halfway between 3.92 (50 %) and 3.96 (60 %).
        assert!((b.open_circuit() - 3.94).abs() < 1e-12);
        b.step(0.5, 1e-6);
        let (v, i, _) = b.reading();
        assert!((i - (0.1 + 4.0 * 0.5)).abs() < 1e-12);
        assert!((v - (3.94 - 0.08 * 2.1)).abs() < 1e-6, "{v}");
        assert!((b.speed_share() - v / 4.2).abs() < 1e-12);
    }

    #[test]
    fn the_charge_falls_by_the_current_over_the_capacity() {
        let mut b = Battery::new(pack()).unwrap();
        // 2.1 A for 60 s from 250 mAh (900 A·s): 14 % used.
        for _ in 0..60_000 {
            b.step(0.5, 1e-3);
        }
        let (_, _, q) = b.reading();
        assert!((q - (1.0 - 2.1 * 60.0 / 900.0)).abs() < 1e-9, "{q}");
    }

    #[test]
    fn a_bad_battery_is_refused_with_its_field() {
        let e = Battery::new(BatteryParams {
            capacity: 0.0,
            ..pack()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "invalid descriptor: 'battery.capacity' must be a finite number > 0, got 0"
        );
        let e = Battery::new(BatteryParams {
            curve: vec![4.0; 11],
            ..pack()
        })
        .unwrap_err();
        assert!(
            e.starts_with("invalid descriptor: 'battery.curve' must be 11 rising"),
            "{e}"
        );
    }
}
