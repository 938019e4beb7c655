//! The PID object of the Crazyflie firmware's controllers (`src/utils/src/pid.c`, described
//! here from its behaviour; the firmware is GPL-3.0 and none of its code is copied): the
//! derivative is taken on the measurement, not the error (no kick when the set-point jumps); the
//! integral is clamped to `±i_limit` unless that is 0; the output to `±output_limit` unless
//! that is 0; a yaw angle wraps its error and its derivative into ±180°. The firmware's
//! low-pass filter on the derivative is off for every loop the Crazyflie 2.x uses with these
//! gains (`ATTITUDE_LPF_ENABLE` and `ATTITUDE_RATE_LPF_ENABLE` false; the position and velocity
//! loops filter only their derivative, whose gain is 0), so it is not modelled.

/// The firmware's default integral limit (`DEFAULT_PID_INTEGRATION_LIMIT`, `pid.h`).
pub const DEFAULT_I_LIMIT: f64 = 5000.0;

/// Gains and limits of one loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// Proportional gain.
    pub kp: f64,
    /// Integral gain.
    pub ki: f64,
    /// Derivative gain (on the measurement).
    pub kd: f64,
    /// Feed-forward gain on the set-point.
    pub kff: f64,
    /// Integral clamp (0: none).
    pub i_limit: f64,
}

impl Gains {
    /// P, I and D with the default integral limit and no feed-forward.
    pub const fn pid(kp: f64, ki: f64, kd: f64) -> Gains {
        Gains {
            kp,
            ki,
            kd,
            kff: 0.0,
            i_limit: DEFAULT_I_LIMIT,
        }
    }

    /// The same with integral limit `i_limit`.
    pub const fn limited(self, i_limit: f64) -> Gains {
        Gains { i_limit, ..self }
    }
}

/// One loop's state.
#[derive(Clone, Copy, Debug)]
pub struct Pid {
    /// Gains and integral limit.
    pub gains: Gains,
    /// Output clamp (0: none).
    pub output_limit: f64,
    /// The period it runs at (s).
    pub dt: f64,
    integral: f64,
    previous: f64,
}

impl Pid {
    /// A loop at rest, run every `dt` seconds.
    pub fn new(gains: Gains, dt: f64) -> Pid {
        Pid {
            gains,
            output_limit: 0.0,
            dt,
            integral: 0.0,
            previous: 0.0,
        }
    }

    /// Forgets the integral and takes `measured` as the last measurement (the firmware's
    /// `pidReset`, done when a flight starts so the derivative does not kick).
    pub fn reset(&mut self, measured: f64) {
        self.integral = 0.0;
        self.previous = measured;
    }

    /// One update towards `desired` from `measured`; `yaw`: both are angles in degrees that
    /// wrap at ±180.
    pub fn update(&mut self, desired: f64, measured: f64, yaw: bool) -> f64 {
        let g = self.gains;
        let wrap = |a: f64| {
            if !yaw {
                a
            } else if a > 180.0 {
                a - 360.0
            } else if a < -180.0 {
                a + 360.0
            } else {
                a
            }
        };
        let error = wrap(desired - measured);
        let derivative = wrap(self.previous - measured) / self.dt;
        let derivative = if derivative.is_nan() { 0.0 } else { derivative };
        self.integral += error * self.dt;
        if g.i_limit != 0.0 {
            self.integral = self.integral.clamp(-g.i_limit, g.i_limit);
        }
        let mut output = g.kp * error + g.kd * derivative + g.ki * self.integral + g.kff * desired;
        if self.output_limit != 0.0 {
            output = output.clamp(-self.output_limit, self.output_limit);
        }
        self.previous = measured;
        output
    }

    /// The integral now (error · s).
    pub fn integral(&self) -> f64 {
        self.integral
    }
}

#[cfg(test)]
mod tests {
    use super::{Gains, Pid};

    #[test]
    fn derivative_on_the_measurement_clamped_integral_and_output() {
        let mut pid = Pid::new(Gains::pid(2.0, 10.0, 0.5).limited(0.03), 0.01);
        pid.reset(1.0);
        // Error 1, measurement unchanged: P 2, D 0, I 10·0.01 = 0.1.
        assert!((pid.update(2.0, 1.0, false) - 2.1).abs() < 1e-12);
        // A set-point jump does not kick the derivative; the measurement moving does:
        // error 4.5, D 0.5·(1 - 0.5)/0.01 = 25, integral 0.01 + 0.045 clamped to 0.03.
        let out = pid.update(5.0, 0.5, false);
        assert!((pid.integral() - 0.03).abs() < 1e-12);
        assert!((out - (9.0 + 25.0 + 0.3)).abs() < 1e-9, "{out}");
        pid.output_limit = 3.0;
        assert_eq!(pid.update(5.0, 0.5, false), 3.0);
    }

    #[test]
    fn a_yaw_error_and_its_derivative_wrap_at_180_degrees() {
        let mut pid = Pid::new(Gains::pid(1.0, 0.0, 0.01), 0.002);
        pid.reset(179.0);
        // From 179° to -179° the vehicle turned 2° on, not 358° back: D 0.01·(-2/0.002) = -10.
        // The error from -179° to 170° is -11°, not 349°.
        let out = pid.update(170.0, -179.0, true);
        assert!((out - (-11.0 - 10.0)).abs() < 1e-9, "{out}");
    }
}
