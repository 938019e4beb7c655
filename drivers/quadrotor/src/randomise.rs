//! Randomised physics for sim-to-real: in a descriptor's `flight.airframe`, any number may be
//! given as a distribution, drawn once when the driver is made, from the instance's seed (which
//! the scene's seed gives: the same seed, the same airframe; each world of a batch is seeded
//! apart, so each draws its own):
//!
//! - `{"uniform": [low, high]}`: U[low, high];
//! - `{"normal": [mean, std]}`: N(mean, std²), optionally `"min"` and `"max"` to clip it.
//!
//! Arrays are walked too (`"linear": [{"uniform": [0.01, 0.02]}, 0.0147, 0.0128]`).

use rand::SeedableRng;
use rand_distr::{Distribution, Normal, Uniform};
use rand_pcg::Pcg64Mcg;
use serde_json::Value;

/// Replaces every distribution under `/flight/airframe` of `descriptor` by a draw from it.
pub fn draw(descriptor: &mut Value, seed: u64) -> Result<(), String> {
    let Some(airframe) = descriptor.pointer_mut("/flight/airframe") else {
        return Ok(());
    };
    // Another stream than the sensors' noise of the same seed.
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    walk(airframe, "flight.airframe", &mut rng)
}

fn walk(v: &mut Value, at: &str, rng: &mut Pcg64Mcg) -> Result<(), String> {
    if let Some(x) = distribution(v, at)? {
        *v = Value::from(x.sample(rng));
        return Ok(());
    }
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                walk(child, &format!("{at}.{k}"), rng)?;
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                walk(child, &format!("{at}[{i}]"), rng)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A distribution to draw from.
enum Draw {
    Uniform(Uniform<f64>),
    Normal(Normal<f64>, f64, f64),
}

impl Draw {
    fn sample(&self, rng: &mut Pcg64Mcg) -> f64 {
        match self {
            Draw::Uniform(u) => u.sample(rng),
            Draw::Normal(n, lo, hi) => n.sample(rng).clamp(*lo, *hi),
        }
    }
}

fn pair(v: &Value, at: &str, kind: &str) -> Result<(f64, f64), String> {
    match v.as_array().map(|a| a.as_slice()) {
        Some([a, b]) => match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) if a.is_finite() && b.is_finite() => Ok((a, b)),
            _ => Err(format!(
                "invalid descriptor: '{at}': '{kind}' takes two finite numbers, got {v}"
            )),
        },
        _ => Err(format!(
            "invalid descriptor: '{at}': '{kind}' takes two finite numbers, got {v}"
        )),
    }
}

fn distribution(v: &Value, at: &str) -> Result<Option<Draw>, String> {
    let Some(map) = v.as_object() else {
        return Ok(None);
    };
    if let Some(u) = map.get("uniform") {
        if map.len() != 1 {
            return Err(format!(
                "invalid descriptor: '{at}': a uniform distribution has only 'uniform'"
            ));
        }
        let (lo, hi) = pair(u, at, "uniform")?;
        let d = Uniform::new_inclusive(lo, hi).map_err(|_| {
            format!("invalid descriptor: '{at}': 'uniform' needs low <= high, got [{lo}, {hi}]")
        })?;
        return Ok(Some(Draw::Uniform(d)));
    }
    if let Some(n) = map.get("normal") {
        if map
            .keys()
            .any(|k| !matches!(k.as_str(), "normal" | "min" | "max"))
        {
            return Err(format!(
                "invalid descriptor: '{at}': a normal distribution has 'normal', 'min' and 'max' only"
            ));
        }
        let (mean, std) = pair(n, at, "normal")?;
        let d = Normal::new(mean, std).map_err(|_| {
            format!("invalid descriptor: '{at}': 'normal' needs a std >= 0, got {std}")
        })?;
        let bound = |k: &str, dflt: f64| match map.get(k) {
            None => Ok(dflt),
            Some(x) => x.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                format!("invalid descriptor: '{at}': '{k}' must be a finite number, got {x}")
            }),
        };
        let (lo, hi) = (bound("min", f64::MIN)?, bound("max", f64::MAX)?);
        if lo > hi {
            return Err(format!(
                "invalid descriptor: '{at}': 'min' {lo} is above 'max' {hi}"
            ));
        }
        return Ok(Some(Draw::Normal(d, lo, hi)));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn airframe(seed: u64) -> Value {
        let mut d = json!({ "trajectory": "x", "flight": { "airframe": {
            "k_f": { "uniform": [5.0e-6, 7.0e-6] },
            "drag": { "linear": [{ "normal": [0.0147, 0.002], "min": 0.0 }, 0.0147, 0.0128] },
            "arm": 0.17
        } } });
        draw(&mut d, seed).unwrap();
        d
    }

    #[test]
    fn draws_are_within_their_range_repeatable_per_seed_and_differ_between_seeds() {
        let a = airframe(7);
        assert_eq!(a, airframe(7));
        let kf = a["flight"]["airframe"]["k_f"].as_f64().unwrap();
        assert!((5.0e-6..=7.0e-6).contains(&kf), "{kf}");
        assert!(
            a["flight"]["airframe"]["drag"]["linear"][0]
                .as_f64()
                .unwrap()
                >= 0.0
        );
        assert_eq!(a["flight"]["airframe"]["arm"], json!(0.17));
        assert_eq!(a["trajectory"], json!("x"));
        let draws: Vec<f64> = (0..200)
            .map(|s| airframe(s)["flight"]["airframe"]["k_f"].as_f64().unwrap())
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        // U[5, 7]e-6: mean 6e-6, its standard error over 200 draws 0.04e-6.
        assert!((mean - 6.0e-6).abs() < 0.2e-6, "{mean}");
        assert_ne!(draws[0], draws[1]);
    }

    #[test]
    fn a_bad_distribution_names_where_it_is() {
        let mut d =
            json!({ "flight": { "airframe": { "drag": { "rotor": { "uniform": [2.0, 1.0] } } } } });
        assert_eq!(
            draw(&mut d, 1).unwrap_err(),
            "invalid descriptor: 'flight.airframe.drag.rotor': 'uniform' needs low <= high, got [2, 1]"
        );
        let mut d = json!({ "flight": { "airframe": { "k_f": { "normal": [1.0] } } } });
        assert_eq!(
            draw(&mut d, 1).unwrap_err(),
            "invalid descriptor: 'flight.airframe.k_f': 'normal' takes two finite numbers, got [1.0]"
        );
    }
}
