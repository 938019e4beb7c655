//! `ssxd sweep`: many runs of one scene as one experiment (docs/sweeps.md).
//!
//! A sweep file names a base scene, parameters (lists of values set at JSON paths into the
//! scene, combined as a grid or zipped), seeds, the run length and mode, and the figures to
//! keep. Every run's scene is written to `OUT/runs/NNNN/scene.json` and checked as
//! `ssxd check` checks a scene before the first run starts; then the runs go, `--jobs` at a
//! time, each a separate `ssxd run` of its scene (with `--scene-dir` at the base scene's
//! directory, so that relative paths name what the base scene names). A finished run leaves
//! `result.json` (written atomically) beside its stats and log; `OUT/results.csv` is rewritten
//! (atomically) after each. Running the same sweep into the same directory again runs only the
//! runs without a result.

mod file;
mod run;
mod slurm;
mod summary;

use file::*;
pub use summary::summary;
use summary::*;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use ssx_core::SsxError;

/// More runs than this need `--yes`.
const MANY_RUNS: usize = 1000;

/// One run: its parameter values (in the sweep's order) and its seed.
struct Run {
    index: usize,
    values: Vec<Value>,
    seed: Option<u64>,
}

impl Run {
    fn id(&self) -> String {
        format!("{:04}", self.index)
    }
}

/// A sweep, read and expanded.
pub struct Sweep {
    file: PathBuf,
    base: PathBuf,
    base_dir: PathBuf,
    parameters: Vec<Parameter>,
    runs: Vec<Run>,
    duration: f64,
    mode: RunMode,
    keep: Vec<String>,
    workers: usize,
    /// Where a run's seed goes.
    seed_path: String,
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename: a
/// reader (or a resumed sweep) sees the old file or the new one, never half of one.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), SsxError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let io = |e: std::io::Error| SsxError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_set_values_where_they_say_and_refuse_what_is_not_there() {
        let mut v: Value = serde_json::json!({"map": {"cave": {"size": [10, 8]}}, "artifacts": [{"name": "a"}, {"name": "b", "replicate": {"grid": {"count": 4}}}]});
        set(&mut v, &parse_path("map.cave.seed").unwrap(), 7.into()).unwrap();
        set(
            &mut v,
            &parse_path("artifacts[1].replicate.grid.count").unwrap(),
            9.into(),
        )
        .unwrap();
        set(&mut v, &parse_path("map.cave.size[1]").unwrap(), 12.into()).unwrap();
        assert_eq!(v["map"]["cave"]["seed"], 7);
        assert_eq!(v["artifacts"][1]["replicate"]["grid"]["count"], 9);
        assert_eq!(v["map"]["cave"]["size"], serde_json::json!([10, 12]));
        let err = |p: &str| set(&mut v.clone(), &parse_path(p).unwrap(), 1.into()).unwrap_err();
        assert_eq!(err("map.room.seed"), "the scene has no 'map.room'");
        assert_eq!(
            err("artifacts[5].name"),
            "'artifacts' has 2 entries, no [5]"
        );
        assert_eq!(
            err("artifacts[0].name.first"),
            "'artifacts[0].name' is not an object"
        );
        assert_eq!(
            parse_path("a..b").unwrap_err(),
            "'a..b' is not a JSON path like `artifacts[1].pose`"
        );
        assert_eq!(
            parse_path("a[x]").unwrap_err(),
            "'a[x]': 'x' is not an index"
        );
    }

    #[test]
    fn numbers_for_people_have_four_significant_digits() {
        assert_eq!(g(1234.567), "1235");
        assert_eq!(g(0.0123456), "0.01235");
        assert_eq!(g(2.5), "2.500");
        assert_eq!(g(f64::NAN), "–");
    }

    #[test]
    fn the_interval_is_students_for_few_runs() {
        let (n, mean, sd, half) = spread(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((n, mean), (4, 2.5));
        assert!((sd - 1.2909944487358056).abs() < 1e-15);
        assert!((half - 3.182 * sd / 2.0).abs() < 1e-12);
        let (_, _, sd, half) = spread(&[5.0]);
        assert!(sd.is_nan() && half.is_nan());
    }

    #[test]
    fn csv_cells_are_quoted_when_they_must_be() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
