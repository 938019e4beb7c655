//! The inner (attitude) loop, in integer fixed-point arithmetic as a flight microcontroller runs
//! it, and a floating-point twin used to check it.
//!
//! Inputs per IMU sample: the gyroscope in raw counts (a ±500 °/s, 16-bit MEMS gyro), the
//! set-points from the outer loop (roll, pitch, yaw rate) and, when a fresh one arrives, the
//! roll and pitch measured by motion capture. The loop integrates the gyro into a roll and pitch
//! estimate (with the first-order coupling of the yaw rate), pulls the estimate towards the
//! motion-capture attitude with a complementary gain, and outputs the angular acceleration a PD
//! law asks for. The airframe turns that into torques with the body inertia.
//!
//! Formats: angles Q32 (rad · 2³²) in `i64`, rates and outputs Q16 (rad/s · 2¹⁶, rad/s² · 2¹⁶),
//! gains Q16. The twin does the same arithmetic in `f64` with the same quantised constants, so
//! the two differ only by rounding.

/// One gyro count in rad/s, times 2²⁴ and rounded: (500 °/s / 32768) · π/180 · 2²⁴.
pub const GYRO_SCALE_Q24: i64 = 4468;
/// The gyro's full scale, in counts.
pub const GYRO_FULL_SCALE: i32 = 32767;

/// Gains of the inner loop (floating point, as a user writes them).
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttitudeGains {
    /// Angle gain (1/s²).
    #[serde(default = "d_kp")]
    pub kp: f64,
    /// Rate damping (1/s).
    #[serde(default = "d_kd")]
    pub kd: f64,
    /// Yaw-rate gain (1/s).
    #[serde(default = "d_kr")]
    pub kr: f64,
    /// Complementary gain: the share of the motion-capture error removed per update.
    #[serde(default = "d_blend")]
    pub blend: f64,
}

fn d_kp() -> f64 {
    225.0
}
fn d_kd() -> f64 {
    24.0
}
fn d_kr() -> f64 {
    10.0
}
fn d_blend() -> f64 {
    0.1
}

impl Default for AttitudeGains {
    fn default() -> Self {
        AttitudeGains {
            kp: d_kp(),
            kd: d_kd(),
            kr: d_kr(),
            blend: d_blend(),
        }
    }
}

fn q16(x: f64) -> i64 {
    (x * 65536.0).round() as i64
}

/// Converts a rate (rad/s) to gyro counts, saturating at full scale.
pub fn gyro_counts(rate: f64) -> i32 {
    let lsb = GYRO_SCALE_Q24 as f64 / (1u64 << 24) as f64;
    (rate / lsb)
        .round()
        .clamp(-f64::from(GYRO_FULL_SCALE), f64::from(GYRO_FULL_SCALE)) as i32
}

/// Set-points and measurements of one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AttitudeInput {
    /// Gyro counts, body x, y, z.
    pub gyro: [i32; 3],
    /// Desired roll and pitch (rad · 2¹⁶).
    pub attitude_sp: [i32; 2],
    /// Desired yaw rate (rad/s · 2¹⁶).
    pub yaw_rate_sp: i32,
    /// Motion-capture roll and pitch (rad · 2¹⁶), when a new one arrived this sample.
    pub mocap: Option<[i32; 2]>,
    /// Time since the last sample (µs).
    pub dt_us: u32,
}

/// The fixed-point loop.
#[derive(Clone, Debug)]
pub struct AttitudeLoop {
    kp: i64,
    kd: i64,
    kr: i64,
    blend: i64,
    /// Roll and pitch estimate (Q32).
    angle: [i64; 2],
    initialised: bool,
}

impl AttitudeLoop {
    /// A loop with these gains (quantised to Q16).
    pub fn new(g: &AttitudeGains) -> Self {
        AttitudeLoop {
            kp: q16(g.kp),
            kd: q16(g.kd),
            kr: q16(g.kr),
            blend: q16(g.blend),
            angle: [0; 2],
            initialised: false,
        }
    }

    /// The roll and pitch estimate (rad · 2³²).
    pub fn estimate(&self) -> [i64; 2] {
        self.angle
    }

    /// One sample: the angular acceleration asked for, body x, y, z (rad/s² · 2¹⁶).
    pub fn update(&mut self, input: &AttitudeInput) -> [i32; 3] {
        // Gyro counts to rad/s Q16, rounded.
        let rate = input
            .gyro
            .map(|c| (i64::from(c) * GYRO_SCALE_Q24 + 128) >> 8);
        if let Some(m) = input.mocap {
            let m = m.map(|a| i64::from(a) << 16);
            if self.initialised {
                for (a, m) in self.angle.iter_mut().zip(m) {
                    *a += ((m - *a) * self.blend) >> 16;
                }
            } else {
                self.angle = m;
                self.initialised = true;
            }
        }
        // d(roll)/dt ≈ p + r·pitch, d(pitch)/dt ≈ q − r·roll; Q16 · Q32 >> 16 = Q32.
        let roll_rate = (rate[0] << 16) + ((rate[2] * self.angle[1]) >> 16);
        let pitch_rate = (rate[1] << 16) - ((rate[2] * self.angle[0]) >> 16);
        // Q32 rad/s · µs / 10⁶ = Q32 rad.
        let dt = i64::from(input.dt_us);
        self.angle[0] += roll_rate * dt / 1_000_000;
        self.angle[1] += pitch_rate * dt / 1_000_000;
        let mut out = [0i32; 3];
        for axis in 0..2 {
            let error = (i64::from(input.attitude_sp[axis]) << 16) - self.angle[axis];
            // Q16 gain · Q32 angle >> 32 = Q16; Q16 gain · Q16 rate >> 16 = Q16.
            let a = ((self.kp * error) >> 32) - ((self.kd * rate[axis]) >> 16);
            out[axis] = a.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        }
        let a = (self.kr * (i64::from(input.yaw_rate_sp) - rate[2])) >> 16;
        out[2] = a.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        out
    }
}

/// The floating-point twin of [`AttitudeLoop`]: the same law and quantised constants in `f64`.
#[derive(Clone, Debug)]
pub struct AttitudeLoopF64 {
    kp: f64,
    kd: f64,
    kr: f64,
    blend: f64,
    angle: [f64; 2],
    initialised: bool,
}

impl AttitudeLoopF64 {
    /// A loop with these gains, quantised as the fixed-point one quantises them.
    pub fn new(g: &AttitudeGains) -> Self {
        let f = |x: f64| q16(x) as f64 / 65536.0;
        AttitudeLoopF64 {
            kp: f(g.kp),
            kd: f(g.kd),
            kr: f(g.kr),
            blend: f(g.blend),
            angle: [0.0; 2],
            initialised: false,
        }
    }

    /// The roll and pitch estimate (rad).
    pub fn estimate(&self) -> [f64; 2] {
        self.angle
    }

    /// One sample: the angular acceleration asked for (rad/s²).
    pub fn update(&mut self, input: &AttitudeInput) -> [f64; 3] {
        let lsb = GYRO_SCALE_Q24 as f64 / (1u64 << 24) as f64;
        let rate = input.gyro.map(|c| f64::from(c) * lsb);
        let from_q16 = |x: i32| f64::from(x) / 65536.0;
        if let Some(m) = input.mocap {
            let m = m.map(from_q16);
            if self.initialised {
                for (a, m) in self.angle.iter_mut().zip(m) {
                    *a += (m - *a) * self.blend;
                }
            } else {
                self.angle = m;
                self.initialised = true;
            }
        }
        let roll_rate = rate[0] + rate[2] * self.angle[1];
        let pitch_rate = rate[1] - rate[2] * self.angle[0];
        let dt = f64::from(input.dt_us) * 1e-6;
        self.angle[0] += roll_rate * dt;
        self.angle[1] += pitch_rate * dt;
        let mut out = [0.0; 3];
        for axis in 0..2 {
            let error = from_q16(input.attitude_sp[axis]) - self.angle[axis];
            out[axis] = self.kp * error - self.kd * rate[axis];
        }
        out[2] = self.kr * (from_q16(input.yaw_rate_sp) - rate[2]);
        out
    }
}
