//! ssxd: the ssx daemon. A thin command line over ssx-core; see README.md.

// Rapier allocates small per-body data; after a scene is loaded the system allocator hands it
// out scattered over a fragmented heap, which made stepping 10,000 bodies up to 2x slower.
// mimalloc's size-segregated pages keep it together.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;
mod replay;
mod rt;
mod safety;
mod sweep;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Parser;
use cli::*;
use ssx_artifacts::Scene;
use ssx_core::{
    Environment, EnvironmentConfig, LatePolicy, Mode, MonotonicClock, NullRenderEngine, PluginKind,
    PluginRegistry, RenderEngine, SsxError,
};

/// Exit status for bad input (scene, flags, files).
const EXIT_BAD_INPUT: u8 = 2;
/// Exit status when the run itself failed (a plugin failed in strict mode).
const EXIT_RUN_FAILED: u8 = 1;
/// Exit status after a second Ctrl-C / SIGTERM (immediate exit, nothing written).
const EXIT_SECOND_SIGNAL: i32 = 130;

fn registry() -> PluginRegistry {
    let mut r = PluginRegistry::new();
    ssx_engines::register(&mut r);
    r
}

/// Logs to stderr; warnings and errors also go to the live view's and the recording's `/log`
/// channel through `hub`.
fn init_logging(level: &str, format: LogFormat, hub: &ssx_view::Hub) -> Result<(), SsxError> {
    use std::io::IsTerminal;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_new(level).map_err(|e| {
        SsxError::Config(format!(
            "--log-level '{}': {e}",
            ssx_core::text::clip(level, 64)
        ))
    })?;
    // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    let fmt = match format {
        LogFormat::Text => fmt.boxed(),
        LogFormat::Json => fmt.json().boxed(),
    };
    tracing_subscriber::registry()
        .with(fmt.with_filter(filter))
        .with(ssx_view::LogLayer::new(hub.clone()))
        .init();
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let hub = ssx_view::Hub::new();
    if let Err(e) = init_logging(&cli.log_level, cli.log_format, &hub) {
        eprintln!("error: {}", ssx_core::text::escape_controls(&e.to_string()));
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    // From here on a plugin that crashes the process is named on stderr.
    if let Err(e) = ssx_core::guard::install_crash_handler() {
        tracing::warn!("cannot install the crash handler: {e}");
    }
    let result = match &cli.command {
        Command::Check { scene } => check(scene),
        Command::Run(args) => run(args, &hub),
        Command::Replay(args) => match replay::replay(args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Plugins { library } => plugins(library),
        Command::Map { scene, out } => write_map(scene, out),
        Command::Sweep {
            summary: Some(dir), ..
        } => sweep::summary(dir),
        Command::Sweep {
            sweep: Some(sweep),
            out: Some(out),
            jobs,
            yes,
            slurm,
            task,
            chunk,
            ..
        } => match run_sweep(sweep, out, *jobs, *yes, (*slurm, *task, *chunk as usize)) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Sweep { .. } => {
            unreachable!("clap requires a sweep file and --out without --summary")
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Names and paths come from files and plugins: no escape sequence reaches the
            // terminal.
            eprintln!("error: {}", ssx_core::text::escape_controls(&e.to_string()));
            ExitCode::from(match e {
                SsxError::PluginFailed(_) => EXIT_RUN_FAILED,
                _ => EXIT_BAD_INPUT,
            })
        }
    }
}

/// The Environment of a scene, built and dropped unrun: every plugin created from its
/// descriptor, so descriptors are checked too.
fn built(scene: &Scene, registry: &PluginRegistry) -> Result<Environment, SsxError> {
    let config = scene.config(1, Mode::Fast, LatePolicy::CatchUp, true);
    Environment::build_sharing(
        config,
        registry,
        &scene.extensions,
        &scene.artifacts,
        Box::new(NullRenderEngine::default()),
        Arc::new(MonotonicClock::new(Duration::ZERO)),
        scene.libraries.clone(),
    )
}

fn check(path: &Path) -> Result<(), SsxError> {
    let registry = registry();
    let scene = Scene::load(path, &registry)?;
    if let Some(w) = scene.overlap_warning() {
        tracing::warn!("{w}");
    }
    let env = built(&scene, &registry)?;
    let drivers = scene
        .artifacts
        .iter()
        .filter(|a| a.driver.is_some())
        .count();
    let sensors: usize = scene.artifacts.iter().map(|a| a.sensors.len()).sum();
    println!(
        "ok: scene '{}' ({}): {} artifacts, {} bodies, {} drivers, {} sensors, {} extensions; timestep {} s, engine {}",
        scene.name,
        path.display(),
        scene.artifacts.len(),
        scene.body_count(),
        drivers,
        sensors,
        scene.extensions.len(),
        scene.timestep,
        env.engine().name(),
    );
    Ok(())
}

/// Exit status: 0 when every run succeeded, 1 when some failed (their rows say why), 130 when
/// stopped by a signal; 2 for a bad sweep, before anything ran.
fn run_sweep(
    file: &Path,
    out: &Path,
    jobs: Option<usize>,
    yes: bool,
    (slurm, task, chunk): (bool, Option<usize>, usize),
) -> Result<ExitCode, SsxError> {
    let s = sweep::Sweep::read(file, yes)?;
    let requested = jobs;
    let jobs = match jobs {
        Some(n) if !(1..=MAX_WORKERS).contains(&n) => {
            return Err(SsxError::Config(format!(
                "--jobs must be from 1 to {MAX_WORKERS}, got {n}"
            )));
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    std::fs::create_dir_all(out).map_err(|e| SsxError::Io {
        path: out.to_path_buf(),
        message: e.to_string(),
    })?;
    s.claim(out)?;
    // An array task checks and runs its own chunk; otherwise every run is checked first.
    let which = match task {
        Some(k) => s.chunk(k, chunk)?,
        None => 0..s.len(),
    };
    let registry = registry();
    let checked = Instant::now();
    s.prepare(out, which.clone(), |scene, home| {
        built(&Scene::load_in(scene, Some(home), &registry)?, &registry).map(drop)
    })?;
    eprintln!(
        "sweep: {} runs checked in {:.1} s",
        which.len(),
        checked.elapsed().as_secs_f64()
    );
    if slurm {
        // Each task asks for --jobs CPUs and runs that many at a time (1 unless said).
        let cpus = requested.unwrap_or(1);
        let script = s.write_sbatch(out, chunk, cpus)?;
        eprintln!(
            "sweep: wrote {}: {} array tasks of {chunk} runs, {cpus} CPUs each; submit it with sbatch",
            script.display(),
            s.len().div_ceil(chunk)
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("sweep: running {jobs} at a time");
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| SsxError::Config(format!("cannot install the signal handler: {e}")))?;
    }
    let (ran, failed) = s.run(out, which, jobs, &stop)?;
    let csv = out.join("results.csv");
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "sweep: stopped after {ran} runs ({failed} failed); run the same command again to finish it; results so far in {}",
            csv.display()
        );
        return Ok(ExitCode::from(EXIT_SECOND_SIGNAL as u8));
    }
    eprintln!(
        "sweep: {ran} runs, {failed} failed; results in {}",
        csv.display()
    );
    // The whole sweep done (not one array task's chunk): its summary, table and box plots.
    if task.is_none() {
        sweep::summary(out)?;
    }
    Ok(if failed > 0 {
        ExitCode::from(EXIT_RUN_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

fn write_map(path: &Path, out: &Path) -> Result<(), SsxError> {
    let scene = Scene::load(path, &registry())?;
    let Some(layout) = &scene.map else {
        return Err(SsxError::Config(format!(
            "the scene '{}' has no \"map\"",
            path.display()
        )));
    };
    let occ = &layout.occupancy;
    let png = ssx_artifacts::map::png(occ).map_err(SsxError::Config)?;
    ssx_core::stats::write_atomic(out, &png)?;
    let free = occ.cells.iter().filter(|&&c| !c).count();
    println!(
        "wrote {}: {} × {} cells of {} m ({:.1} × {:.1} m), {:.1}% free",
        out.display(),
        occ.width,
        occ.height,
        layout.resolution,
        f64::from(occ.width) * layout.resolution,
        f64::from(occ.height) * layout.resolution,
        100.0 * free as f64 / occ.cells.len() as f64
    );
    Ok(())
}

fn plugins(named: &Path) -> Result<(), SsxError> {
    // A relative name is looked for in the current directory first, then as a scene's would be.
    let path = ssx_core::abi::find_library(named, Path::new("."))?;
    let lib = ssx_core::abi::PluginLibrary::open(&path)?;
    println!("library      {}", lib.path().display());
    println!(
        "ABI version  {} (this ssxd speaks {})",
        lib.abi_version(),
        ssx_sdk::abi::SSX_ABI_VERSION
    );
    let list: Vec<_> = lib.plugins().collect();
    println!("plugins      {}", list.len());
    let width = list.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in list {
        println!("  {:<6}  {:<width$}  {}", p.kind, p.name, p.description);
    }
    Ok(())
}

/// Checks that the stats file can be written before running, so a long run is not lost at the
/// end for a typo in a directory name or a read-only place: it must be a regular file or not
/// exist yet (never a device, a FIFO or a directory), in a directory where a file can be created.
fn check_output_path(path: &Path) -> Result<(), SsxError> {
    let bad = |why: String| SsxError::Config(format!("--stats-json '{}': {why}", path.display()));
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => return Err(bad("is a directory".into())),
        Ok(m) if !m.is_file() => {
            return Err(bad(format!(
                "is {}, not a regular file; name a file",
                ssx_core::files::kind(m.file_type())
            )));
        }
        _ => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(bad(format!("directory '{}' does not exist", dir.display())));
    }
    // The file is written by renaming a temporary file in the same directory: try one now.
    tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| bad(format!("cannot create a file in '{}': {e}", dir.display())))?;
    Ok(())
}

/// The live view's settings: the flags', else the scene's `view` block's, else the defaults.
pub(crate) fn view_options(
    name: String,
    file: ssx_artifacts::schema::ViewFile,
    view_port: Option<u16>,
    view_rate: Option<f64>,
) -> ssx_view::ViewOptions {
    let defaults = ssx_view::ViewOptions::default();
    let port = view_port.or(file.port).unwrap_or(defaults.port);
    let page_port = match (view_port, file.page_port) {
        (Some(0), _) => 0,
        (Some(p), _) => p.saturating_add(1),
        (None, Some(p)) => p,
        (None, None) if port == 0 => 0,
        (None, None) => port.saturating_add(1),
    };
    ssx_view::ViewOptions {
        name,
        host: if file.expose { "0.0.0.0" } else { "127.0.0.1" }.into(),
        port,
        page_port,
        rate: view_rate
            .or(file.rate.map(|r| r.0))
            .unwrap_or(defaults.rate),
        max_rays: file.max_rays.map_or(defaults.max_rays, |n| n as usize),
        ..defaults
    }
}

/// The live view and the recorder, as the flags and the scene ask; None when neither is on.
fn output(
    o: &RunArgs,
    scene: &Scene,
    config: &EnvironmentConfig,
    hub: &ssx_view::Hub,
) -> Result<Option<ssx_view::Output>, SsxError> {
    if !o.live.view && o.record.is_none() {
        return Ok(None);
    }
    let view = o.live.view.then(|| {
        view_options(
            format!("ssx: {}", scene.name),
            scene.view.unwrap_or_default(),
            o.live.view_port,
            o.live.view_rate,
        )
    });
    let record = match &o.record {
        Some(path) => Some(ssx_view::RecordOptions {
            path: path.clone(),
            every: o.record_every,
            // Fast runs have no deadline to protect: the recording is complete instead.
            lossless: o.mode == ModeArg::Fast,
            run: ssx_view::RunRecord::of(&scene.file, o.scene_dir.as_deref(), config)
                .map_err(|e| SsxError::Config(e.to_string()))?,
        }),
        None => None,
    };
    ssx_view::Output::new(hub.clone(), view.as_ref(), record.as_ref())
        .map(Some)
        .map_err(|e| SsxError::Config(e.to_string()))
}

/// A flag the first SIGINT or SIGTERM sets, asking for a clean stop at the next step boundary;
/// a second one, while the flag is already set, exits at once. Installed first: loading the
/// scene already makes plugin copies, which a signal's default action would leave behind.
pub(crate) fn stop_on_signals() -> Result<Arc<AtomicBool>, SsxError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            sig,
            EXIT_SECOND_SIGNAL,
            Arc::clone(&stop),
        )
        .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
        .map_err(|e| SsxError::Config(format!("cannot install signal handlers: {e}")))?;
    }
    Ok(stop)
}

fn run(o: &RunArgs, hub: &ssx_view::Hub) -> Result<(), SsxError> {
    let stop = stop_on_signals()?;

    let path = o.scene.as_path();
    let mode = match (o.mode, o.rt_factor) {
        (ModeArg::Fast, _) => Mode::Fast,
        (ModeArg::Realtime, None) => Mode::Realtime { factor: 1.0 },
        (ModeArg::Realtime, Some(f)) if (RT_FACTOR.0..=RT_FACTOR.1).contains(&f) => {
            Mode::Realtime { factor: f }
        }
        (ModeArg::Realtime, Some(f)) => {
            return Err(SsxError::Config(format!(
                "--rt-factor must be from {} to {} (simulated seconds per wall second), got {}",
                RT_FACTOR.0,
                RT_FACTOR.1,
                ssx_sdk::number(f)
            )));
        }
    };
    if o.spin_margin_us > MAX_SPIN_MARGIN_US {
        return Err(SsxError::Config(format!(
            "--spin-margin-us must be at most {MAX_SPIN_MARGIN_US}, got {}",
            o.spin_margin_us
        )));
    }
    if let Some(p) = &o.stats_json {
        check_output_path(p)?;
    }
    let workers = match o.workers {
        Some(n) if !(1..=MAX_WORKERS).contains(&n) => {
            return Err(SsxError::Config(format!(
                "--workers must be from 1 to {MAX_WORKERS}, got {n}"
            )));
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let registry = registry();
    let mut scene = Scene::load_in(path, o.scene_dir.as_deref(), &registry)?;
    if let Some(engine) = &o.engine {
        if !registry.has(PluginKind::Engine, engine) {
            return Err(SsxError::Config(format!(
                "--engine '{}': unknown physics engine (known: {})",
                ssx_core::text::clip(engine, 40),
                registry.names(PluginKind::Engine).join(", ")
            )));
        }
        scene.engine = engine.clone();
    }
    if let Some(w) = scene.overlap_warning() {
        tracing::warn!("{w}");
    }
    let max_steps = match (o.steps, o.duration) {
        (Some(n), _) => Some(n),
        (None, Some(d)) if d.is_finite() && d >= 0.0 => {
            Some((d / scene.timestep - 1e-9).ceil().max(0.0) as u64)
        }
        (None, Some(d)) => {
            return Err(SsxError::Config(format!(
                "--duration must be a number of seconds >= 0, got {d}"
            )));
        }
        (None, None) => None,
    };
    let watchdog = match (o.watchdog, scene.watchdog) {
        (Some(s), _) if !(WATCHDOG.0..=WATCHDOG.1).contains(&s) => {
            return Err(SsxError::Config(format!(
                "--watchdog must be from {} to {} seconds, got {}",
                WATCHDOG.0,
                WATCHDOG.1,
                ssx_sdk::number(s)
            )));
        }
        (Some(s), _) | (None, Some(s)) => Duration::from_secs_f64(s),
        (None, None) => ssx_core::guard::default_limit(scene.timestep),
    };

    let stats_file = o
        .stats_json
        .as_deref()
        .map(safety::StatsFile::start)
        .transpose()?;
    let _watchdog = safety::watchdog(watchdog, &stop, stats_file.clone())?;

    let late_policy = match o.late_policy {
        LatePolicyArg::CatchUp => LatePolicy::CatchUp,
        LatePolicyArg::Reanchor => LatePolicy::Reanchor,
    };
    let config = scene.config(workers, mode, late_policy, o.strict);
    let render: Box<dyn RenderEngine> = match output(o, &scene, &config, hub)? {
        Some(out) => {
            if let Some((ws, page)) = out.endpoints() {
                tracing::info!("live view: open {page} in a browser, or connect Foxglove to {ws}");
            }
            Box::new(out)
        }
        None => Box::new(NullRenderEngine::default()),
    };
    // With the libraries the scene's check opened, handed over (the scene outlives the build,
    // and a library swapped out must not stay open for it): each is copied and opened once.
    let mut env = Environment::build_sharing(
        config,
        &registry,
        &scene.extensions,
        &scene.artifacts,
        render,
        Arc::new(MonotonicClock::new(Duration::from_micros(o.spin_margin_us))),
        std::mem::take(&mut scene.libraries),
    )?;
    env.set_scene_source(Box::new(scene.source(o.scene_dir.as_deref(), &registry)));
    if let Some(f) = &stats_file {
        f.write_now(&env.summary())?;
    }
    let quiet = o.quiet;
    if !quiet {
        tracing::info!(
            "running scene '{}': {} artifacts, {} bodies, timestep {} s, {} mode{}, {} workers{}",
            scene.name,
            scene.artifacts.len(),
            scene.body_count(),
            scene.timestep,
            mode.name(),
            match mode {
                Mode::Realtime { factor } if factor != 1.0 => format!(" x{factor}"),
                _ => String::new(),
            },
            env.workers(),
            max_steps
                .map(|n| format!(", {n} steps"))
                .unwrap_or_default(),
        );
    }
    rt::apply(
        &env,
        &rt::RtOptions {
            priority: o.rt_priority,
            affinity: o.cpu_affinity.clone().map(|c| c.0),
            lock_memory: o.lock_memory,
            strict: o.strict_rt,
        },
    )?;
    if o.paused {
        if scene.extensions.is_empty() {
            tracing::warn!(
                "--paused: the scene has no extension that could resume or step it; the run waits for SIGTERM"
            );
        }
        env.pause();
        tracing::info!("paused before step 1 (--paused): waiting for a control command");
    }
    if o.watch_plugins {
        env.watch_plugins()?;
        tracing::info!("--watch-plugins: a driver or sensor library written anew is swapped in");
    }
    let watch: Vec<(String, u32)> = scene
        .watch
        .iter()
        .filter_map(|name| env.artifact(name).map(|a| (name.clone(), a.bodies.start)))
        .collect();
    let outcome = env.run(max_steps, &stop, |s, env| {
        if let Some(f) = &stats_file {
            f.snapshot(&env.summary());
        }
        if hub.active() {
            // Once a second, the --stats-json fields for the view's and the recording's /stats.
            if let Ok(json) = serde_json::to_string(&env.summary()) {
                hub.stats(json);
            }
        }
        if quiet {
            return;
        }
        let mut line = format!(
            "t={:.2} s  steps={}  rtf={:.2}  misses={}",
            s.sim_time, s.steps, s.rt_factor, s.misses
        );
        for (name, body) in &watch {
            let p = env.states()[*body as usize].pose.translation.vector;
            line.push_str(&format!("  {name}=({:.2}, {:.2}, {:.2})", p.x, p.y, p.z));
        }
        tracing::info!(target: "ssx::status", "{line}");
    });
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        tracing::info!("stopped by signal at step {}", env.steps());
    }
    let summary = env.summary();
    // Shut down in order: drivers and sensors, then the engines and the view (which finishes
    // the recording), then the extensions.
    drop(env);
    println!("{}", summary.render_text());
    if let Some(tallies) = ssx_core::counters::tallies() {
        // A build with the `counters` feature (issue 60's floor table): the work, and per step.
        let steps = summary.steps.max(1) as f64;
        println!("counted work (total, per step)");
        for (name, n) in tallies {
            println!("  {name:<20} {n:>14} {:>14.1}", n as f64 / steps);
        }
    }
    let view = hub.report();
    print!("{}", view.render_text());
    if let Some(e) = view.record_error {
        return Err(SsxError::Config(format!("the recording failed: {e}")));
    }
    if let Some(f) = stats_file {
        f.finish(&summary)?;
    }
    outcome
}
