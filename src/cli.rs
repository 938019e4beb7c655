//! The command line: `ssxd run`, `replay`, `check`, `plugins`, `map` and `sweep`, their flags and the
//! accepted ranges of the numbers.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::rt;

/// Accepted ranges of the numeric flags.
pub(crate) const RT_FACTOR: (f64, f64) = (1e-3, 1e3);
pub(crate) const MAX_WORKERS: usize = 256;
pub(crate) const MAX_SPIN_MARGIN_US: u64 = 100_000;
pub(crate) const WATCHDOG: (f64, f64) = (0.01, 3600.0);

#[derive(Parser)]
#[command(
    name = "ssxd",
    version,
    about = "ssx: a real-time, hardware-in-the-loop multi-robot simulator daemon"
)]
pub(crate) struct Cli {
    /// Log level: error, warn, info, debug, trace (or a tracing filter such as `ssx=debug`).
    #[arg(long, global = true, default_value = "info")]
    pub(crate) log_level: String,
    /// Log format.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
pub(crate) enum ModeArg {
    Realtime,
    Fast,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum LatePolicyArg {
    /// Keep the schedule; faster steps win the offset back (SSX).
    CatchUp,
    /// Forgive the offset: the next deadline counts from the late step's end.
    Reanchor,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a scene.
    Run(Box<RunArgs>),
    /// Check a scene and everything it loads, without running it.
    Check {
        /// The scene file.
        scene: PathBuf,
    },
    /// Write a scene's map (read or generated) as a PNG: walls black, free space white.
    Map {
        /// The scene file.
        scene: PathBuf,
        /// The image to write (replaced atomically).
        out: PathBuf,
    },
    /// Many runs of one scene as one experiment: parameters and seeds from a sweep file,
    /// `--jobs` runs at a time, results in OUT/results.csv (docs/sweeps.md). Run it again to
    /// finish a sweep that was stopped.
    Sweep {
        /// The sweep file.
        #[arg(required_unless_present = "summary")]
        sweep: Option<PathBuf>,
        /// The directory for the runs and the results (made if missing).
        #[arg(long, required_unless_present = "summary")]
        out: Option<PathBuf>,
        /// Runs at a time (default: the cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Allow more than 1000 runs.
        #[arg(long)]
        yes: bool,
        /// Check every run, then write OUT/sweep.sbatch, a Slurm job array of one task a chunk
        /// of runs, instead of running them (docs/sweeps.md).
        #[arg(long, conflicts_with = "task")]
        slurm: bool,
        /// Run only chunk K of the runs: the Slurm array task K (`--task $SLURM_ARRAY_TASK_ID`).
        #[arg(long, value_name = "K")]
        task: Option<usize>,
        /// Runs a chunk, for --slurm and --task.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
        chunk: u64,
        /// Summarise a sweep's results instead of running it: per configuration, the mean,
        /// standard deviation and 95% interval of each kept figure (printed, and written to
        /// DIR/summary.csv).
        #[arg(long, value_name = "DIR", conflicts_with_all = ["sweep", "out", "jobs", "yes", "slurm", "task"])]
        summary: Option<PathBuf>,
    },
    /// Simulate a recorded run again from its recording (`--record`), in fast mode with no
    /// network (docs/replay.md).
    Replay(ReplayArgs),
    /// List the plugins a library exports, with its ABI version.
    Plugins {
        /// The plugin library (a path, or a file name searched in SSX_PLUGIN_PATH and next to
        /// ssxd).
        library: PathBuf,
    },
}

#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The recording (`ssxd run --record`, `ssx.Sim(record=...)`).
    pub(crate) recording: PathBuf,
    /// Compare every pose snapshot of the recording with the replay's, to the bit; the first
    /// difference is named (step, body) and the exit status is 1.
    #[arg(long)]
    pub(crate) verify: bool,
    /// Stop after this many steps in all (resets do not start the count again).
    #[arg(long, value_name = "STEP", value_parser = parse_steps)]
    pub(crate) until: Option<u64>,
    /// Worker threads, the stepping thread included (default: the recorded run's).
    #[arg(long)]
    pub(crate) workers: Option<usize>,
    /// Find the scene's relative paths from DIR instead of where the recording says the run
    /// found them.
    #[arg(long)]
    pub(crate) scene_dir: Option<PathBuf>,
    /// Record the replay into a new MCAP file (every snapshot, as a fast run's recording).
    #[arg(long, value_name = "PATH.mcap")]
    pub(crate) record: Option<PathBuf>,
    /// fast (the default) steps as fast as it can; realtime holds the run's timestep to the
    /// wall clock, to watch the replay with --view as the run went.
    #[arg(long, value_enum, default_value_t = ModeArg::Fast)]
    pub(crate) mode: ModeArg,
    #[command(flatten)]
    pub(crate) live: ViewArgs,
}

/// The live view's flags, for a run and a replay.
#[derive(Args)]
pub(crate) struct ViewArgs {
    /// Serve the live view: Foxglove WebSocket on 127.0.0.1:8765, the built-in page on the next
    /// port (a run's scene's "view" block can change both).
    #[arg(long)]
    pub(crate) view: bool,
    /// View frames per wall second (default 30, or a run's scene's view.rate).
    #[arg(long, requires = "view", allow_negative_numbers = true)]
    pub(crate) view_rate: Option<f64>,
    /// The view's WebSocket port (0: any free port; the page takes the next one, or any free one
    /// with 0).
    #[arg(long, requires = "view")]
    pub(crate) view_port: Option<u16>,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// The scene file.
    pub(crate) scene: PathBuf,
    /// realtime holds the wall clock (scaled by --rt-factor); fast never waits.
    #[arg(long, value_enum, default_value_t = ModeArg::Realtime)]
    pub(crate) mode: ModeArg,
    /// Simulated seconds per wall second in realtime mode (0.5 = half speed).
    #[arg(long, conflicts_with = "mode", allow_negative_numbers = true)]
    pub(crate) rt_factor: Option<f64>,
    /// Stop after this many steps.
    #[arg(long, conflicts_with = "duration", allow_negative_numbers = true, value_parser = parse_steps)]
    pub(crate) steps: Option<u64>,
    /// Stop after this many simulated seconds.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) duration: Option<f64>,
    /// Write the statistics as JSON here at exit (atomically).
    #[arg(long)]
    pub(crate) stats_json: Option<PathBuf>,
    /// Worker threads, the stepping thread included (default: available cores).
    #[arg(long)]
    pub(crate) workers: Option<usize>,
    /// No status line.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Stop the run (exit status 1) when a plugin fails instead of disabling it.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Run on this physics engine instead of the scene's ("rapier" or "kinematic").
    #[arg(long)]
    pub(crate) engine: Option<String>,
    /// What a late step does to the schedule.
    #[arg(long, value_enum, default_value_t = LatePolicyArg::CatchUp)]
    pub(crate) late_policy: LatePolicyArg,
    /// The pacer sleeps natively until this many microseconds before a deadline, then spins.
    #[arg(long, default_value_t = 500)]
    pub(crate) spin_margin_us: u64,
    /// SCHED_FIFO at this priority (1-99) for the stepping thread and the workers.
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub(crate) rt_priority: Option<i32>,
    /// Pin the stepping thread to the first CPU of this list (e.g. 2,3 or 2-3) and worker k to
    /// the (k+1)-th, cycling.
    #[arg(long, value_parser = rt::parse_cpu_list)]
    pub(crate) cpu_affinity: Option<rt::CpuList>,
    /// Lock all memory in RAM (mlockall), so no page fault stalls a step.
    #[arg(long)]
    pub(crate) lock_memory: bool,
    /// Stop (exit status 2) when a real-time setting cannot be applied, instead of warning.
    #[arg(long)]
    pub(crate) strict_rt: bool,
    #[command(flatten)]
    pub(crate) live: ViewArgs,
    /// Record the run into this MCAP file (it must not exist yet).
    #[arg(long)]
    pub(crate) record: Option<PathBuf>,
    /// Record a snapshot every N steps (default 1: every step).
    #[arg(long, requires = "record", default_value_t = 1)]
    pub(crate) record_every: u64,
    /// Report a plugin or physics step that has not returned after this many seconds (default:
    /// the scene's "watchdog", else max(1 s, 100 timesteps)).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) watchdog: Option<f64>,
    /// Start paused, before step 1: an extension (the Zenoh control) resumes or steps it.
    /// Without one that can, the run waits for SIGTERM.
    #[arg(long)]
    pub(crate) paused: bool,
    /// Swap a driver or sensor library in while the run goes on whenever its file changes on
    /// disk (a new build copied over it): docs/plugins.md "Swapping a library".
    #[arg(long)]
    pub(crate) watch_plugins: bool,
    /// Find the scene's relative paths (artifact files, maps, plugin libraries) from this
    /// directory instead of the scene file's: a scene written elsewhere from another, as
    /// `ssxd sweep` writes its runs'.
    #[arg(long)]
    pub(crate) scene_dir: Option<PathBuf>,
}

/// `--steps`: a whole number of steps, >= 0.
pub(crate) fn parse_steps(text: &str) -> Result<u64, String> {
    text.trim().parse().map_err(|_| {
        format!(
            "expected a whole number of steps >= 0, got '{}'",
            ssx_core::text::clip(text, 40)
        )
    })
}
