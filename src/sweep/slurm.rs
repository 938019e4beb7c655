//! A sweep on a Slurm cluster: the runs cut into chunks, one array task each.

use std::path::{Path, PathBuf};

use ssx_core::SsxError;

use super::*;

impl Sweep {
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
}
