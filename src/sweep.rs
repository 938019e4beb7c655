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

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use ssx_core::SsxError;

/// More runs than this need `--yes`.
const MANY_RUNS: usize = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    /// The base scene, relative to the sweep file.
    scene: PathBuf,
    #[serde(default)]
    parameters: Vec<Parameter>,
    #[serde(default)]
    combine: Combine,
    #[serde(default)]
    seeds: Option<Seeds>,
    /// Simulated seconds a run.
    duration: f64,
    #[serde(default)]
    mode: RunMode,
    #[serde(default)]
    keep: Vec<String>,
    /// Worker threads of each run.
    #[serde(default = "one")]
    workers: usize,
}

fn one() -> usize {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameter {
    /// Where in the scene, e.g. `artifacts[1].replicate.grid.count`.
    path: String,
    values: Vec<Value>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Combine {
    /// Every value of each parameter with every value of the others.
    #[default]
    Grid,
    /// The first values together, then the second, ...: the lists are equally long.
    Zip,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Seeds {
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
enum RunMode {
    #[default]
    Fast,
    Realtime,
}

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

fn bad(file: &Path, at: &str, message: impl std::fmt::Display) -> SsxError {
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" (at {at})")
    };
    SsxError::Config(format!("sweep '{}'{at}: {message}", file.display()))
}

/// One step of a JSON path: a key or an index.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `a.b[2].c` as steps; the error says what is wrong with it.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
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
fn set(root: &mut Value, steps: &[Step], value: Value) -> Result<(), String> {
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

    /// The runs of array task `task` of chunks of `chunk` runs, or why there is no such task.
    pub fn chunk(&self, task: usize, chunk: usize) -> Result<std::ops::Range<usize>, SsxError> {
        let tasks = self.runs.len().div_ceil(chunk);
        if task >= tasks {
            return Err(SsxError::Config(format!(
                "--task {task}: the sweep's {} runs make {tasks} tasks of {chunk} (0 to {})",
                self.runs.len(),
                tasks - 1
            )));
        }
        Ok(task * chunk..((task + 1) * chunk).min(self.runs.len()))
    }

    /// `out/sweep.sbatch`: a Slurm job array of one task a chunk of `chunk` runs, each task
    /// `ssxd sweep SWEEP --out OUT --task $SLURM_ARRAY_TASK_ID` with its CPUs as `--jobs`.
    /// Paths are made absolute: the script runs on other nodes, from another directory (they
    /// must see `out`, the sweep and its scenes at the same paths: a shared file system).
    pub fn write_sbatch(&self, out: &Path, chunk: usize, cpus: usize) -> Result<PathBuf, SsxError> {
        let abs = |p: &Path| {
            std::path::absolute(p).map_err(|e| SsxError::Io {
                path: p.to_path_buf(),
                message: e.to_string(),
            })
        };
        let exe = std::env::current_exe()
            .map_err(|e| SsxError::Config(format!("cannot find ssxd itself: {e}")))?;
        let (file, dir) = (abs(&self.file)?, abs(out)?);
        let tasks = self.runs.len().div_ceil(chunk);
        let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
        let script = format!(
            "#!/bin/bash\n\
             # Written by ssxd sweep --slurm: the sweep {file} ({runs} runs) as {tasks} array tasks of\n\
             # {chunk} runs (the last may have fewer). Submit with: sbatch {script}\n\
             # When the array is done: ssxd sweep --summary {dir}\n\
             # A task that is cut short leaves its finished runs; submitting again runs the rest.\n\
             #SBATCH --job-name=ssx-sweep\n\
             #SBATCH --array=0-{last}\n\
             #SBATCH --cpus-per-task={cpus}\n\
             #SBATCH --output={log}\n\
             exec {exe} sweep {qfile} --out {qdir} --task \"$SLURM_ARRAY_TASK_ID\" --chunk {chunk} --jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"\n",
            file = file.display(),
            runs = self.runs.len(),
            script = dir.join("sweep.sbatch").display(),
            dir = dir.display(),
            last = tasks - 1,
            log = dir.join("slurm-%A_%a.out").display(),
            exe = quote(&exe),
            qfile = quote(&file),
            qdir = quote(&dir),
        );
        let path = out.join("sweep.sbatch");
        write_atomically(&path, script.as_bytes())?;
        Ok(path)
    }

    /// Takes `out` for this sweep: its copy of the sweep file is `out/sweep.json`. A directory
    /// that holds another sweep's runs (a different sweep file) is refused, so that a resumed
    /// sweep never mixes runs of two.
    pub fn claim(&self, out: &Path) -> Result<(), SsxError> {
        let text = std::fs::read(&self.file).map_err(|e| SsxError::Io {
            path: self.file.clone(),
            message: e.to_string(),
        })?;
        let mine = out.join("sweep.json");
        match std::fs::read(&mine) {
            Ok(old) if old == text => Ok(()),
            Ok(_) => Err(SsxError::Config(format!(
                "'{}' holds the runs of another sweep (its sweep.json differs from '{}'): give another --out, or delete it",
                out.display(),
                self.file.display()
            ))),
            Err(_) => write_atomically(&mine, &text),
        }
    }

    /// Writes every run's scene under `out/runs/` and checks each as `ssxd check` does, before
    /// anything runs; the error names the run and its values.
    pub fn prepare(
        &self,
        out: &Path,
        which: std::ops::Range<usize>,
        check: impl Fn(&Path, &Path) -> Result<(), SsxError>,
    ) -> Result<(), SsxError> {
        let text = std::fs::read_to_string(&self.base).map_err(|e| SsxError::Io {
            path: self.base.clone(),
            message: e.to_string(),
        })?;
        let base: Value = serde_json::from_str(&text).map_err(|e| SsxError::Io {
            path: self.base.clone(),
            message: format!("not JSON: {e}"),
        })?;
        for run in &self.runs[which] {
            let mut scene = base.clone();
            for (p, v) in self.parameters.iter().zip(&run.values) {
                let steps = parse_path(&p.path).expect("checked when read");
                set(&mut scene, &steps, v.clone()).map_err(|m| {
                    bad(
                        &self.file,
                        "parameters",
                        format!("run {} ({}): {m}", run.id(), self.describe(run)),
                    )
                })?;
            }
            if let Some(seed) = run.seed {
                let steps = parse_path(&self.seed_path).expect("checked when read");
                set(&mut scene, &steps, seed.into())
                    .map_err(|m| bad(&self.file, "seeds.path", format!("run {}: {m}", run.id())))?;
            }

            let dir = out.join("runs").join(run.id());
            std::fs::create_dir_all(&dir).map_err(|e| SsxError::Io {
                path: dir.clone(),
                message: e.to_string(),
            })?;
            let path = dir.join("scene.json");
            write_atomically(
                &path,
                serde_json::to_string_pretty(&scene)
                    .expect("JSON")
                    .as_bytes(),
            )?;
            check(&path, &self.base_dir).map_err(|e| {
                SsxError::Config(format!("run {} ({}): {e}", run.id(), self.describe(run)))
            })?;
        }
        Ok(())
    }

    /// `path = value, ..., seed = s`, as a person reads a run.
    fn describe(&self, run: &Run) -> String {
        let mut parts: Vec<String> = self
            .parameters
            .iter()
            .zip(&run.values)
            .map(|(p, v)| format!("{} = {v}", p.path))
            .collect();
        if let Some(s) = run.seed {
            parts.push(format!("{} = {s}", self.seed_path));
        }
        parts.join(", ")
    }

    /// Runs every run without a result, `jobs` at a time, until done or `stop` is set.
    /// Returns how many ran and how many of those failed.
    pub fn run(
        &self,
        out: &Path,
        which: std::ops::Range<usize>,
        jobs: usize,
        stop: &Arc<AtomicBool>,
    ) -> Result<(usize, usize), SsxError> {
        let exe = std::env::current_exe()
            .map_err(|e| SsxError::Config(format!("cannot find ssxd itself: {e}")))?;
        let mine = &self.runs[which];
        let todo: Vec<&Run> = mine
            .iter()
            .filter(|r| !out.join("runs").join(r.id()).join("result.json").exists())
            .collect();
        let done_before = mine.len() - todo.len();
        if done_before > 0 {
            eprintln!(
                "sweep: {done_before} of {} runs already have results; running the other {}",
                mine.len(),
                todo.len()
            );
        }
        let started = Instant::now();
        let mut queue = todo.into_iter();
        let mut running: Vec<(Child, &Run, Instant)> = Vec::new();
        let (mut ran, mut failed) = (0usize, 0usize);
        let total = mine.len();
        loop {
            while running.len() < jobs && !stop.load(Ordering::Relaxed) {
                let Some(run) = queue.next() else { break };
                running.push((self.spawn(&exe, out, run)?, run, Instant::now()));
            }
            if running.is_empty() {
                break;
            }
            if stop.load(Ordering::Relaxed) {
                for (child, run, _) in &mut running {
                    // SAFETY: kill(2) on our own child's pid; no memory is touched.
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                    let _ = child.wait();
                    eprintln!("sweep: run {} stopped, not recorded", run.id());
                }
                break;
            }
            // Polled: a run that ends is noticed within 10 ms (the cost of a sweep over running
            // the same scenes alone, BENCHMARKS.md).
            std::thread::sleep(Duration::from_millis(10));
            let mut i = 0;
            while i < running.len() {
                let status = running[i]
                    .0
                    .try_wait()
                    .map_err(|e| SsxError::Config(format!("waiting for a run: {e}")))?;
                let Some(status) = status else {
                    i += 1;
                    continue;
                };
                let (_, run, at) = running.swap_remove(i);
                let wall = at.elapsed().as_secs_f64();
                let ok = self.record(out, run, status.code(), wall)?;
                ran += 1;
                failed += usize::from(!ok);
                write_csv(out, &self.parameters, &self.seed_path, &self.keep)?;
                let finished = done_before + ran;
                let per = started.elapsed().as_secs_f64() / ran as f64;
                let left = (total - finished) as f64 * per;
                eprintln!(
                    "sweep: [{finished}/{total}] run {} {} in {wall:.1} s; {failed} failed; about {} left",
                    run.id(),
                    if ok { "ok" } else { "FAILED" },
                    human(left)
                );
            }
        }
        write_csv(out, &self.parameters, &self.seed_path, &self.keep)?;
        Ok((ran, failed))
    }

    fn spawn(&self, exe: &Path, out: &Path, run: &Run) -> Result<Child, SsxError> {
        let dir = out.join("runs").join(run.id());
        let log = std::fs::File::create(dir.join("log.txt")).map_err(|e| SsxError::Io {
            path: dir.join("log.txt"),
            message: e.to_string(),
        })?;
        let err = log
            .try_clone()
            .map_err(|e| SsxError::Config(e.to_string()))?;
        let _ = std::fs::remove_file(dir.join("stats.json"));
        Command::new(exe)
            .arg("run")
            .arg(dir.join("scene.json"))
            .arg("--scene-dir")
            .arg(&self.base_dir)
            .args([
                "--mode",
                if self.mode == RunMode::Fast {
                    "fast"
                } else {
                    "realtime"
                },
            ])
            .args(["--duration", &self.duration.to_string()])
            .args(["--workers", &self.workers.to_string()])
            .arg("--quiet")
            .arg("--stats-json")
            .arg(dir.join("stats.json"))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| SsxError::Config(format!("cannot start run {}: {e}", run.id())))
    }

    /// Writes a finished run's `result.json`: its values, figures, exit status, wall time and,
    /// when it failed, why. Returns whether it succeeded.
    fn record(
        &self,
        out: &Path,
        run: &Run,
        code: Option<i32>,
        wall: f64,
    ) -> Result<bool, SsxError> {
        let dir = out.join("runs").join(run.id());
        let stats: Option<Value> = std::fs::read_to_string(dir.join("stats.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let ok = code == Some(0) && stats.is_some();
        let figures: serde_json::Map<String, Value> = self
            .keep
            .iter()
            .map(|k| {
                (
                    k.clone(),
                    stats
                        .as_ref()
                        .and_then(|s| figure(s, k))
                        .unwrap_or(Value::Null),
                )
            })
            .collect();
        let error = if ok {
            Value::Null
        } else {
            let log = std::fs::read_to_string(dir.join("log.txt")).unwrap_or_default();
            let line = log
                .lines()
                .rev()
                .find(|l| l.contains("error"))
                .or_else(|| log.lines().rev().find(|l| !l.trim().is_empty()));
            Value::String(line.unwrap_or("no output").trim().to_string())
        };
        let result = serde_json::json!({
            "run": run.id(),
            "values": run.values,
            "seed": run.seed,
            "figures": figures,
            "exit_status": code,
            "wall_s": wall,
            "error": error,
        });
        write_atomically(&dir.join("result.json"), result.to_string().as_bytes())?;
        Ok(ok)
    }
}

/// Every finished run's `result.json` under `out/runs`, in run order.
fn results(out: &Path) -> Result<Vec<Value>, SsxError> {
    let runs = out.join("runs");
    let entries = std::fs::read_dir(&runs).map_err(|e| SsxError::Io {
        path: runs.clone(),
        message: format!("{e} (is this a sweep's --out directory?)"),
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("result.json"))
        .filter(|p| p.exists())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .ok_or_else(|| SsxError::Io {
                    path: p.clone(),
                    message: "not a run's result".into(),
                })
        })
        .collect()
}

/// `results.csv`: one row a finished run, in run order: its values, seed, kept figures, exit
/// status, wall time and error.
fn write_csv(
    out: &Path,
    parameters: &[Parameter],
    seed_name: &str,
    keep: &[String],
) -> Result<(), SsxError> {
    let mut text = String::from("run");
    for p in parameters {
        text.push(',');
        text.push_str(&cell(&p.path));
    }
    text.push(',');
    text.push_str(&cell(seed_name));
    for k in keep {
        text.push(',');
        text.push_str(&cell(k));
    }
    text.push_str(",exit_status,wall_s,error\n");
    for r in results(out)? {
        text.push_str(&cell(&plain(&r["run"])));
        for v in r["values"].as_array().into_iter().flatten() {
            text.push(',');
            text.push_str(&cell(&plain(v)));
        }
        text.push(',');
        text.push_str(&plain(&r["seed"]));
        for k in keep {
            text.push(',');
            text.push_str(&cell(&plain(&r["figures"][k])));
        }
        text.push_str(&format!(
            ",{},{:.3},{}\n",
            plain(&r["exit_status"]),
            r["wall_s"].as_f64().unwrap_or(0.0),
            cell(&plain(&r["error"]))
        ));
    }
    write_atomically(&out.join("results.csv"), text.as_bytes())
}

/// Two-sided 95% quantiles of Student's t for 1 to 30 degrees of freedom; 1.96 beyond.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// n, mean, sample standard deviation and the half-width of the 95% interval of the mean
/// (Student's t); the last two are NaN for fewer than two values.
fn spread(x: &[f64]) -> (usize, f64, f64, f64) {
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (n, mean, f64::NAN, f64::NAN);
    }
    let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let t = T95.get(n - 2).copied().unwrap_or(1.96);
    (n, mean, sd, t * sd / (n as f64).sqrt())
}

/// `ssxd sweep --summary DIR`: every configuration (the runs with the same parameter values,
/// over their seeds) with each kept figure's n, mean, standard deviation and 95% interval;
/// printed and written to `DIR/summary.csv`. Failed runs and missing figures are left out
/// (n says how many counted).
pub fn summary(dir: &Path) -> Result<(), SsxError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| SsxError::Io {
            path: p.to_path_buf(),
            message: format!("{e} (is this a sweep's --out directory?)"),
        })
    };
    let f: SweepFile =
        serde_json::from_str(&read(&dir.join("sweep.json"))?).map_err(|e| SsxError::Io {
            path: dir.join("sweep.json"),
            message: e.to_string(),
        })?;
    // results.csv again from every result: array tasks on several nodes each wrote it with the
    // results they saw.
    let seed_name = match &f.seeds {
        Some(Seeds::Range {
            path: Some(path), ..
        }) => path.as_str(),
        _ => "seed",
    };
    write_csv(dir, &f.parameters, seed_name, &f.keep)?;
    let results = results(dir)?;
    // Configurations in the order their first run appears.
    let mut configs: Vec<(Value, Vec<&Value>)> = Vec::new();
    for r in &results {
        match configs.iter_mut().find(|(v, _)| *v == r["values"]) {
            Some((_, rs)) => rs.push(r),
            None => configs.push((r["values"].clone(), vec![r])),
        }
    }
    let mut csv = String::new();
    for p in &f.parameters {
        csv.push_str(&cell(&p.path));
        csv.push(',');
    }
    csv.push_str("figure,n,mean,sd,ci95_low,ci95_high\n");
    let mut text = String::new();
    for (values, rs) in &configs {
        let label: Vec<String> = f
            .parameters
            .iter()
            .zip(values.as_array().into_iter().flatten())
            .map(|(p, v)| format!("{} = {v}", p.path))
            .collect();
        text.push_str(&format!(
            "{} ({} runs)\n",
            if label.is_empty() {
                "all runs".into()
            } else {
                label.join(", ")
            },
            rs.len()
        ));
        for k in &f.keep {
            let x: Vec<f64> = rs
                .iter()
                .filter(|r| r["exit_status"] == 0)
                .filter_map(|r| r["figures"][k].as_f64())
                .collect();
            if x.is_empty() {
                text.push_str(&format!("  {k}: no values\n"));
                continue;
            }
            let (n, mean, sd, half) = spread(&x);
            text.push_str(&format!(
                "  {k}: mean {} sd {} 95% [{}, {}] (n = {n})\n",
                g(mean),
                g(sd),
                g(mean - half),
                g(mean + half)
            ));
            for v in values.as_array().into_iter().flatten() {
                csv.push_str(&cell(&plain(v)));
                csv.push(',');
            }
            csv.push_str(&format!(
                "{},{n},{mean},{},{},{}\n",
                cell(k),
                num(sd),
                num(mean - half),
                num(mean + half)
            ));
        }
    }
    write_atomically(&dir.join("summary.csv"), csv.as_bytes())?;
    print!("{text}");
    // A box plot per figure: one box a configuration, over its successful runs.
    let mut plots = Vec::new();
    let mut unlabelled = false;
    for k in &f.keep {
        let boxes: Vec<(String, Vec<f64>)> = configs
            .iter()
            .map(|(values, rs)| {
                let label: Vec<String> =
                    values.as_array().into_iter().flatten().map(short).collect();
                let x = rs
                    .iter()
                    .filter(|r| r["exit_status"] == 0)
                    .filter_map(|r| r["figures"][k].as_f64())
                    .collect();
                (label.join(", "), x)
            })
            .collect();
        if boxes.iter().all(|(_, x)| x.is_empty()) {
            continue;
        }
        let name: String = k
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{name}.png"));
        unlabelled |= !ssx_view::plot::box_plot(&path, k, &boxes).map_err(SsxError::Config)?;
        plots.push(path.display().to_string());
    }
    if !plots.is_empty() {
        println!("box plots: {}", plots.join(", "));
    }
    if unlabelled {
        println!("(no TrueType font found: the plots have no text; set SSX_PLOT_FONT to a .ttf)");
    }
    println!(
        "{} runs in {} configurations; table in {}",
        results.len(),
        configs.len(),
        dir.join("summary.csv").display()
    );
    Ok(())
}

/// A number for people: 4 significant digits, "–" for NaN.
fn g(v: f64) -> String {
    if v.is_nan() {
        return "–".into();
    }
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// A parameter value as a box's label: a file named by path as its name alone.
fn short(v: &Value) -> String {
    let text = plain(v);
    match Path::new(&text).file_stem() {
        Some(stem) if text.ends_with(".json") => stem.to_string_lossy().into_owned(),
        _ => text,
    }
}

/// A number for the CSV: empty for NaN.
fn num(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        v.to_string()
    }
}

/// A figure from a run's stats: a metric of that name, else the stats field at that dotted
/// path (`step_time_us.p99`).
fn figure(stats: &Value, name: &str) -> Option<Value> {
    if let Some(v) = stats["metrics"].get(name) {
        return Some(v.clone());
    }
    let mut at = stats;
    for key in name.split('.') {
        at = at.get(key)?;
    }
    at.is_number().then(|| at.clone())
}

/// A value as a CSV cell shows it: strings without quotes, null empty.
fn plain(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A CSV cell, quoted when it must be (RFC 4180).
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn human(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
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
