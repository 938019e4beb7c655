//! The sweep file: its fields, the JSON paths it sets in the scene, and reading it into runs.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use ssx_core::SsxError;

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SweepFile {
    /// The base scene, relative to the sweep file.
    pub(super) scene: PathBuf,
    #[serde(default)]
    pub(super) parameters: Vec<Parameter>,
    #[serde(default)]
    pub(super) combine: Combine,
    #[serde(default)]
    pub(super) seeds: Option<Seeds>,
    /// Simulated seconds a run.
    pub(super) duration: f64,
    #[serde(default)]
    pub(super) mode: RunMode,
    #[serde(default)]
    pub(super) keep: Vec<String>,
    /// Worker threads of each run.
    #[serde(default = "one")]
    pub(super) workers: usize,
}

pub(super) fn one() -> usize {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Parameter {
    /// Where in the scene, e.g. `artifacts[1].replicate.grid.count`.
    pub(super) path: String,
    pub(super) values: Vec<Value>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(super) enum Combine {
    /// Every value of each parameter with every value of the others.
    #[default]
    Grid,
    /// The first values together, then the second, ...: the lists are equally long.
    Zip,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Seeds {
    List(Vec<u64>),
    /// `count` seeds from `from`, set at `path` (the scene's `seed` unless said: a generated
    /// map's `map.cave.seed`, say).
    Range {
        from: u64,
        count: u64,
        #[serde(default)]
        path: Option<String>,
    },
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(super) enum RunMode {
    #[default]
    Fast,
    Realtime,
}

pub(super) fn bad(file: &Path, at: &str, message: impl std::fmt::Display) -> SsxError {
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" (at {at})")
    };
    SsxError::Config(format!("sweep '{}'{at}: {message}", file.display()))
}

/// One step of a JSON path: a key or an index.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// `a.b[2].c` as steps; the error says what is wrong with it.
pub(super) fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if key.is_empty() {
            return Err(format!(
                "'{path}' is not a JSON path like `artifacts[1].pose`"
            ));
        }
        steps.push(Step::Key(key.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').ok_or(format!("'{path}': '[' without ']'"))?;
            let index = rest[1..close]
                .parse()
                .map_err(|_| format!("'{path}': '{}' is not an index", &rest[1..close]))?;
            steps.push(Step::Index(index));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("'{path}': '{rest}' after an index"));
            }
        }
    }
    Ok(steps)
}

/// Sets `value` at `steps` in `root`: every step but the last must exist; the last may add a
/// key to an object, not an element to an array.
pub(super) fn set(root: &mut Value, steps: &[Step], value: Value) -> Result<(), String> {
    let mut at = root;
    let mut walked = String::new();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        match step {
            Step::Key(k) => {
                let Some(obj) = at.as_object_mut() else {
                    return Err(format!("'{walked}' is not an object"));
                };
                if last {
                    obj.insert(k.clone(), value);
                    return Ok(());
                }
                if !walked.is_empty() {
                    walked.push('.');
                }
                walked.push_str(k);
                at = obj
                    .get_mut(k)
                    .ok_or_else(|| format!("the scene has no '{walked}'"))?;
            }
            Step::Index(n) => {
                let Some(list) = at.as_array_mut() else {
                    return Err(format!("'{walked}' is not a list"));
                };
                let len = list.len();
                let slot = list
                    .get_mut(*n)
                    .ok_or_else(|| format!("'{walked}' has {len} entries, no [{n}]"))?;
                walked.push_str(&format!("[{n}]"));
                if last {
                    *slot = value;
                    return Ok(());
                }
                at = slot;
            }
        }
    }
    Ok(())
}

impl Sweep {
    /// Reads a sweep file and expands its runs; `yes` allows more than [`MANY_RUNS`].
    pub fn read(file: &Path, yes: bool) -> Result<Sweep, SsxError> {
        let text = std::fs::read_to_string(file).map_err(|e| SsxError::Io {
            path: file.to_path_buf(),
            message: e.to_string(),
        })?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let f: SweepFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            bad(file, if at == "." { "" } else { &at }, e.into_inner())
        })?;
        if !(f.duration.is_finite() && f.duration > 0.0) {
            return Err(bad(
                file,
                "duration",
                format!(
                    "must be a positive number of simulated seconds, got {}",
                    f.duration
                ),
            ));
        }
        if !(1..=256).contains(&f.workers) {
            return Err(bad(
                file,
                "workers",
                format!("must be from 1 to 256, got {}", f.workers),
            ));
        }
        for (i, p) in f.parameters.iter().enumerate() {
            parse_path(&p.path).map_err(|m| bad(file, &format!("parameters[{i}].path"), m))?;
            if p.values.is_empty() {
                return Err(bad(
                    file,
                    &format!("parameters[{i}].values"),
                    "an empty list: give at least one value",
                ));
            }
        }
        for (i, k) in f.keep.iter().enumerate() {
            let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
            if k.is_empty() || !k.chars().all(ok) {
                return Err(bad(
                    file,
                    &format!("keep[{i}]"),
                    format!(
                        "'{k}' is not a figure name (a stats field like `achieved_rt_factor` or `step_time_us.p99`, or a metric like `explore.explored_90_s`)"
                    ),
                ));
            }
        }
        let combos: Vec<Vec<Value>> = match f.combine {
            _ if f.parameters.is_empty() => vec![Vec::new()],
            Combine::Zip => {
                let n = f.parameters[0].values.len();
                if let Some((i, p)) = f
                    .parameters
                    .iter()
                    .enumerate()
                    .find(|(_, p)| p.values.len() != n)
                {
                    return Err(bad(
                        file,
                        &format!("parameters[{i}].values"),
                        format!(
                            "zipped lists must be equally long: {} values here, {n} in parameters[0]",
                            p.values.len()
                        ),
                    ));
                }
                (0..n)
                    .map(|k| f.parameters.iter().map(|p| p.values[k].clone()).collect())
                    .collect()
            }
            Combine::Grid => {
                let mut out = vec![Vec::new()];
                for p in &f.parameters {
                    if out.len().saturating_mul(p.values.len()) > 10 * MANY_RUNS * MANY_RUNS {
                        return Err(bad(file, "parameters", "too many combinations to list"));
                    }
                    out = out
                        .into_iter()
                        .flat_map(|c: Vec<Value>| {
                            p.values.iter().map(move |v| {
                                let mut c = c.clone();
                                c.push(v.clone());
                                c
                            })
                        })
                        .collect();
                }
                out
            }
        };
        let seeds: Vec<Option<u64>> = match &f.seeds {
            None => vec![None],
            Some(Seeds::List(l)) if l.is_empty() => {
                return Err(bad(file, "seeds", "an empty list: give at least one seed"));
            }
            Some(Seeds::List(l)) => l.iter().map(|&s| Some(s)).collect(),
            Some(Seeds::Range { count: 0, .. }) => {
                return Err(bad(file, "seeds.count", "must be at least 1"));
            }
            Some(Seeds::Range { from, count, .. }) => (0..*count).map(|k| Some(from + k)).collect(),
        };
        let seed_path = match &f.seeds {
            Some(Seeds::Range {
                path: Some(path), ..
            }) => {
                parse_path(path).map_err(|m| bad(file, "seeds.path", m))?;
                path.clone()
            }
            _ => "seed".to_string(),
        };
        let total = combos.len().saturating_mul(seeds.len());
        if total > MANY_RUNS && !yes {
            return Err(bad(
                file,
                "",
                format!(
                    "{total} runs ({} combinations × {} seeds): more than {MANY_RUNS}; pass --yes if you mean it",
                    combos.len(),
                    seeds.len()
                ),
            ));
        }
        let mut runs = Vec::with_capacity(total);
        for values in &combos {
            for &seed in &seeds {
                runs.push(Run {
                    index: runs.len(),
                    values: values.clone(),
                    seed,
                });
            }
        }
        let base = file.parent().unwrap_or(Path::new(".")).join(&f.scene);
        let base_dir = base.parent().unwrap_or(Path::new(".")).to_path_buf();
        Ok(Sweep {
            file: file.to_path_buf(),
            base,
            base_dir,
            parameters: f.parameters,
            runs,
            duration: f.duration,
            mode: f.mode,
            keep: f.keep,
            workers: f.workers,
            seed_path,
        })
    }

    /// How many runs.
    pub fn len(&self) -> usize {
        self.runs.len()
    }
}
