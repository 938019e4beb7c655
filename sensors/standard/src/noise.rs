//! Seeded Gaussian noise, repeatable per instance.

use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_pcg::Pcg64Mcg;

pub(crate) struct Noise(Pcg64Mcg);

impl Noise {
    pub(crate) fn new(seed: u64) -> Self {
        Noise(Pcg64Mcg::seed_from_u64(seed))
    }
    /// A sample of N(0, sigma²); exactly 0 without drawing when sigma is 0, so that a sensor
    /// with its noise off reads the truth exactly.
    pub(crate) fn gauss(&mut self, sigma: f64) -> f64 {
        if sigma == 0.0 {
            return 0.0;
        }
        let z: f64 = StandardNormal.sample(&mut self.0);
        sigma * z
    }
    pub(crate) fn gauss3(&mut self, sigma: f64) -> [f64; 3] {
        [self.gauss(sigma), self.gauss(sigma), self.gauss(sigma)]
    }
    /// A sample of U[0, 1).
    pub(crate) fn uniform(&mut self) -> f64 {
        rand::Rng::random(&mut self.0)
    }
    /// A whole number from 0 to `n` inclusive, each as likely.
    pub(crate) fn up_to(&mut self, n: u32) -> u32 {
        rand::Rng::random_range(&mut self.0, 0..=n)
    }
}

/// A non-negative, finite parameter, or a descriptor error naming it.
pub(crate) fn non_negative(name: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "invalid descriptor: '{name}' must be a finite number >= 0, got {v}"
        ))
    }
}
