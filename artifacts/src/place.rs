//! Where an artifact's instances go (one pose, a grid, a circle or seeded random poses) and
//! what each instance overrides in its driver and sensors.

use rand::{Rng, SeedableRng};
use ssx_core::math::{Pose, pose_from_xyz_rpy};
use ssx_core::{PluginSpec, SensorSpec, SsxError};

use crate::loader::Loader;
use crate::loader::fnv1a;
use crate::prepared::Prepared;
use crate::schema::*;
use crate::source::Source;

impl Loader<'_> {
    pub(crate) fn placements(
        &self,
        src: &Source,
        at: &str,
        inst: &InstanceFile,
        base: Pose,
    ) -> Result<Vec<(String, Pose)>, SsxError> {
        let Some(rep) = inst.replicate else {
            return Ok(vec![(inst.name.clone(), base)]);
        };
        let named = |i: usize, local: Pose| (format!("{}_{i}", inst.name), base * local);
        Ok(match rep {
            Replicate::Grid {
                count,
                columns,
                spacing,
            } => {
                let cols = columns.map_or((count.0 as f64).sqrt().ceil() as usize, |c| c.0);
                (0..count.0)
                    .map(|i| {
                        let (row, col) = (i / cols, i % cols);
                        named(
                            i,
                            pose_from_xyz_rpy(
                                [col as f64 * spacing[0].0, row as f64 * spacing[1].0, 0.0],
                                [0.0; 3],
                            ),
                        )
                    })
                    .collect()
            }
            Replicate::Circle { count, radius } => (0..count.0)
                .map(|i| {
                    let th = std::f64::consts::TAU * i as f64 / count.0 as f64;
                    named(
                        i,
                        pose_from_xyz_rpy(
                            [radius.0 * th.cos(), radius.0 * th.sin(), 0.0],
                            [0.0, 0.0, th],
                        ),
                    )
                })
                .collect(),
            Replicate::Random {
                count,
                min,
                max,
                random_yaw,
                seed,
            } => {
                for k in 0..3 {
                    if min[k].0 > max[k].0 {
                        return Err(src.err(
                            &format!("{at}.replicate.random.min[{k}]"),
                            format!("min {} is above max {}", min[k].0, max[k].0),
                        ));
                    }
                }
                if seed.is_none() {
                    self.seed_used.set(true);
                }
                let seed = seed.unwrap_or(self.seed ^ fnv1a(&inst.name));
                let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
                (0..count.0)
                    .map(|i| {
                        let mut p = [0.0; 3];
                        for k in 0..3 {
                            p[k] = min[k].0 + rng.random::<f64>() * (max[k].0 - min[k].0);
                        }
                        let yaw = if random_yaw {
                            rng.random::<f64>() * std::f64::consts::TAU - std::f64::consts::PI
                        } else {
                            0.0
                        };
                        named(i, pose_from_xyz_rpy(p, [0.0, 0.0, yaw]))
                    })
                    .collect()
            }
        })
    }

    pub(crate) fn overrides(
        &self,
        src: &Source,
        at: &str,
        p: &Prepared,
        o: &OverridesFile,
    ) -> Result<(Option<PluginSpec>, Vec<SensorSpec>), SsxError> {
        let merge = |spec: &PluginSpec,
                     keys: &serde_json::Map<String, serde_json::Value>,
                     json_at: String| {
            let mut spec = spec.clone();
            let serde_json::Value::Object(obj) = &mut spec.descriptor else {
                return Err(src.err(&json_at, format!("cannot override keys of a descriptor that is not a JSON object (plugin '{}')", spec.plugin)));
            };
            for (k, v) in keys {
                obj.insert(k.clone(), v.clone());
            }
            spec.origin = Some(src.origin(&json_at));
            Ok(spec)
        };
        let driver = match (&o.driver, &p.driver) {
            (None, d) => d.clone(),
            (Some(keys), Some(d)) => Some(merge(d, keys, format!("{at}.overrides.driver"))?),
            (Some(_), None) => {
                return Err(src.err(
                    &format!("{at}.overrides.driver"),
                    format!("'{}' has no driver to override", p.src.path.display()),
                ));
            }
        };
        let mut sensors = p.sensors.clone();
        for (name, keys) in &o.sensors {
            let json_at = format!("{at}.overrides.sensors.{name}");
            let Some(s) = sensors.iter_mut().find(|s| &s.name == name) else {
                let known: Vec<&str> = p.sensors.iter().map(|s| s.name.as_str()).collect();
                return Err(src.err(
                    &json_at,
                    format!(
                        "no sensor named '{name}' in '{}' (sensors: {})",
                        p.src.path.display(),
                        known.join(", ")
                    ),
                ));
            };
            s.plugin = merge(&s.plugin, keys, json_at)?;
        }
        Ok((driver, sensors))
    }
}
