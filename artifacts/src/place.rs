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

/// Draws for one copy before a `random` replicate with a clearance gives up.
const DRAWS: usize = 1000;

/// The copies placed so far, by cells of the clearance's side: a draw is checked against the
/// nine cells about it.
struct Apart {
    clearance: f64,
    cells: std::collections::HashMap<(i64, i64), Vec<[f64; 2]>>,
}

impl Apart {
    fn new(clearance: f64) -> Apart {
        Apart {
            clearance,
            cells: Default::default(),
        }
    }
    fn cell(&self, p: [f64; 3]) -> (i64, i64) {
        (
            (p[0] / self.clearance).floor() as i64,
            (p[1] / self.clearance).floor() as i64,
        )
    }
    /// Whether `p` is at least the clearance from every copy placed.
    fn free(&self, p: [f64; 3]) -> bool {
        let (cx, cy) = self.cell(p);
        let c2 = self.clearance * self.clearance;
        (cx - 1..=cx + 1).all(|x| {
            (cy - 1..=cy + 1).all(|y| {
                self.cells.get(&(x, y)).is_none_or(|v| {
                    v.iter().all(|q| {
                        let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
                        dx * dx + dy * dy >= c2
                    })
                })
            })
        })
    }
    fn add(&mut self, p: [f64; 3]) {
        let c = self.cell(p);
        self.cells.entry(c).or_default().push([p[0], p[1]]);
    }
}

impl Loader<'_> {
    /// The frame an instance's `pose` is given in: the world's, or with `relative_to` the pose
    /// its named earlier instance was placed at.
    pub(crate) fn frame(
        &self,
        src: &Source,
        at: &str,
        inst: &InstanceFile,
    ) -> Result<Pose, SsxError> {
        let Some(other) = &inst.relative_to else {
            return Ok(Pose::identity());
        };
        match self.placed.get(other).map(Vec::as_slice) {
            Some([pose]) => Ok(*pose),
            Some(copies) => Err(src.err(
                &format!("{at}.relative_to"),
                format!(
                    "'{other}' has {} copies; relative_to needs an instance of one",
                    copies.len()
                ),
            )),
            None => Err(src.err(
                &format!("{at}.relative_to"),
                format!("no instance '{other}' before this one to stand relative to"),
            )),
        }
    }

    pub(crate) fn placements(
        &self,
        src: &Source,
        at: &str,
        inst: &InstanceFile,
        base: Pose,
    ) -> Result<Vec<(String, Pose)>, SsxError> {
        let Some(rep) = &inst.replicate else {
            return Ok(vec![(inst.name.clone(), base)]);
        };
        let named = |i: usize, local: Pose| (format!("{}_{i}", inst.name), base * local);
        Ok(match *rep {
            Replicate::Grid {
                count,
                columns,
                spacing,
                leave_out,
            } => {
                let cols = columns.map_or((count.0 as f64).sqrt().ceil() as usize, |c| c.0);
                let empty = self.left_out(src, at, inst, count.0, leave_out)?;
                (0..count.0)
                    .filter(|i| !empty.contains(i))
                    .enumerate()
                    .map(|(n, i)| {
                        let (row, col) = (i / cols, i % cols);
                        named(
                            n,
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
                clearance,
                ref apart_from,
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
                let mut apart = clearance.map(|c| Apart::new(c.0));
                // The earlier instances' copies, in this pattern's frame.
                let back = base.inverse();
                for (j, other) in apart_from.iter().enumerate() {
                    let json_at = format!("{at}.replicate.random.apart_from[{j}]");
                    let (Some(apart), Some(copies)) = (&mut apart, self.placed.get(other)) else {
                        return Err(src.err(
                            &json_at,
                            match apart {
                                None => "apart_from needs a clearance".to_string(),
                                Some(_) => format!(
                                    "no instance '{other}' before this one to keep apart from"
                                ),
                            },
                        ));
                    };
                    for q in copies {
                        let t = q.translation;
                        let local = back * ssx_core::math::Point3::new(t.x, t.y, 0.0);
                        apart.add([local.x, local.y, 0.0]);
                    }
                }
                let mut out = Vec::with_capacity(count.0);
                for i in 0..count.0 {
                    let draw = |rng: &mut rand_pcg::Pcg64| {
                        let mut p = [0.0; 3];
                        for k in 0..3 {
                            p[k] = min[k].0 + rng.random::<f64>() * (max[k].0 - min[k].0);
                        }
                        p
                    };
                    let mut p = draw(&mut rng);
                    if let Some(apart) = &mut apart {
                        let mut tries = 1;
                        while !apart.free(p) {
                            if tries == DRAWS {
                                return Err(src.err(
                                    &format!("{at}.replicate.random.clearance"),
                                    format!(
                                        "no place for copy {i} of {} at least {} m from the others after {DRAWS} draws: widen the box or lower the clearance",
                                        count.0, apart.clearance
                                    ),
                                ));
                            }
                            p = draw(&mut rng);
                            tries += 1;
                        }
                        apart.add(p);
                    }
                    let yaw = if random_yaw {
                        rng.random::<f64>() * std::f64::consts::TAU - std::f64::consts::PI
                    } else {
                        0.0
                    };
                    out.push(named(i, pose_from_xyz_rpy(p, [0.0, 0.0, yaw])));
                }
                out
            }
        })
    }

    /// The `leave_out` cells of a grid of `count` drawn from the instance's seed (the scene
    /// seed and its name, as a random pattern's), in the order drawn; none when 0.
    fn left_out(
        &self,
        src: &Source,
        at: &str,
        inst: &InstanceFile,
        count: usize,
        leave_out: usize,
    ) -> Result<Vec<usize>, SsxError> {
        if leave_out == 0 {
            return Ok(Vec::new());
        }
        if leave_out >= count {
            return Err(src.err(
                &format!("{at}.replicate.grid.leave_out"),
                format!(
                    "{leave_out} cells left out of {count} leaves no copy: it must be below count"
                ),
            ));
        }
        self.seed_used.set(true);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(self.seed ^ fnv1a(&inst.name));
        // A partial Fisher-Yates shuffle: the first `leave_out` of a random order.
        let mut cells: Vec<usize> = (0..count).collect();
        for i in 0..leave_out {
            let j = rng.random_range(i..count);
            cells.swap(i, j);
        }
        cells.truncate(leave_out);
        Ok(cells)
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
            let serde_json::Value::Object(obj) = std::sync::Arc::make_mut(&mut spec.descriptor)
            else {
                return Err(src.err(&json_at, format!("cannot override keys of a descriptor that is not a JSON object (plugin '{}')", spec.plugin)));
            };
            for (k, v) in keys {
                obj.insert(k.clone(), v.clone());
            }
            spec.origin = Some(src.origin(&json_at).into());
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
