//! Running a sweep: claiming its output directory, writing and checking every run's scene,
//! then the runs, `--jobs` at a time, each recorded as it ends.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use ssx_core::SsxError;

use super::*;

impl Sweep {
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
