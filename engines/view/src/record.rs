//! MCAP recordings: the same channels as the live view, every snapshot the loop hands over,
//! written by a thread of their own into zstd chunks.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use foxglove::{
    Context, McapAttachment, McapCompression, McapWriteOptions, McapWriter, McapWriterHandle,
};
use ssx_core::abi::PluginLibrary;
use ssx_core::{EnvironmentConfig, LatePolicy, Mode, SwappedBuild};

use crate::ViewError;
use crate::frame::Queues;
use crate::hub::{Hub, RecordState};
use crate::inputs::{self, Pending};
use crate::mesh::Links;
use crate::publish::Channels;
use crate::scene::SceneInfo;
use crossbeam::channel::{Receiver, Sender};

/// What to record.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordOptions {
    /// The file to write (must not exist yet).
    pub path: PathBuf,
    /// A snapshot every this many steps.
    pub every: u64,
    /// Wait for the writer instead of dropping snapshots when it is behind. For runs without
    /// deadlines (`--mode fast`); a real-time run never waits.
    pub lossless: bool,
    /// What made the run, written at the start of the file.
    pub run: RunRecord,
}

/// What made a run, kept in its recording (docs/view.md "What a recording says of its run"):
/// the `ssx.run` metadata record and the scene file, attached under its name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunRecord {
    /// The `ssx.run` record's names and values.
    pub metadata: BTreeMap<String, String>,
    /// Files attached: (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
}

impl RunRecord {
    /// The run `config` makes of the scene file `scene`: ssx's version, the scene's name and
    /// file, the directory its relative paths were found in (`scene_dir`, else the file's own,
    /// made absolute), the engine, seed, workers, timestep, gravity, mode, late policy and
    /// strictness; and the file's bytes (the artifact files it names are not attached).
    pub fn of(
        scene: &Path,
        scene_dir: Option<&Path>,
        config: &EnvironmentConfig,
    ) -> Result<Self, ViewError> {
        let bytes = std::fs::read(scene).map_err(|source| ViewError::SceneFile {
            path: scene.to_path_buf(),
            source,
        })?;
        let file = scene
            .file_name()
            .map_or_else(|| "scene.json".into(), |n| n.to_string_lossy().into_owned());
        let g = config.gravity;
        let dir = scene_dir
            .or_else(|| scene.parent())
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::path::absolute(dir).map_err(|source| ViewError::SceneFile {
            path: scene.to_path_buf(),
            source,
        })?;
        let metadata = [
            ("ssx_version", env!("CARGO_PKG_VERSION").to_string()),
            ("scene", config.scene.clone()),
            ("scene_file", file.clone()),
            ("scene_dir", dir.to_string_lossy().into_owned()),
            ("engine", config.engine.clone()),
            ("seed", config.seed.to_string()),
            ("workers", config.workers.to_string()),
            ("timestep", config.timestep.to_string()),
            ("gravity", format!("{} {} {}", g.x, g.y, g.z)),
            (
                "mode",
                match config.mode {
                    Mode::Fast => config.mode.name().to_string(),
                    Mode::Realtime { factor } => format!("{} x{factor}", config.mode.name()),
                },
            ),
            (
                "late_policy",
                match config.late_policy {
                    LatePolicy::CatchUp => "catch-up",
                    LatePolicy::Reanchor => "reanchor",
                }
                .to_string(),
            ),
            ("strict", config.strict.to_string()),
            // What the extensions answered the plugins is on this channel (a replay's inputs).
            ("inputs", inputs::TOPIC.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Ok(RunRecord {
            metadata,
            files: vec![(file, bytes)],
        })
    }
}

/// The writer's chunks are closed at least this often, so a killed run loses at most this much.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Rays are recorded at most this often (per simulated second); every reading is recorded.
const RAYS_HZ: f64 = 50.0;
/// Target chunk size (bytes, before compression).
const CHUNK_SIZE: u64 = 1 << 20;

pub(crate) struct Recorder {
    file: Option<File>,
    run: RunRecord,
    /// Each step's answers (`ssx_core::tape`), with their log time: never dropped.
    inputs: (Sender<Pending>, Receiver<Pending>),
    state: Arc<RecordState>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Creates the file; refuses one that exists, so no earlier recording is overwritten.
    pub fn create(o: &RecordOptions) -> Result<Self, ViewError> {
        let file = File::create_new(&o.path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                ViewError::RecordingExists(o.path.clone())
            } else {
                ViewError::Recording {
                    path: o.path.clone(),
                    source,
                }
            }
        })?;
        Ok(Self {
            file: Some(file),
            run: o.run.clone(),
            inputs: crossbeam::channel::unbounded(),
            state: Arc::new(RecordState {
                path: Some(o.path.clone()),
                ..Default::default()
            }),
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        })
    }

    pub fn state(&self) -> Arc<RecordState> {
        Arc::clone(&self.state)
    }

    /// Where the stepping thread sends each step's inputs and their log time.
    pub(crate) fn inputs(&self) -> Sender<Pending> {
        self.inputs.0.clone()
    }

    /// Starts the writer thread.
    pub fn start(
        &mut self,
        scene: Arc<SceneInfo>,
        frames: Arc<Queues>,
        hub: Hub,
        libraries: Vec<Arc<PluginLibrary>>,
    ) -> Result<std::thread::Thread, ViewError> {
        let file = self.file.take().ok_or(ViewError::AlreadyStarted)?;
        let ctx = Context::new();
        let options = McapWriteOptions::new()
            .compression(Some(McapCompression::Zstd))
            // One thread: the writer's own. zstd's worker pool would compete with the workers.
            .compression_threads(0)
            .chunk_size(Some(CHUNK_SIZE));
        let writer = McapWriter::with_options(options)
            .context(&ctx)
            .create(BufWriter::new(file))
            .map_err(ViewError::Writer)?;
        // What made the run, before any message (so a killed run's file has it too).
        if !self.run.metadata.is_empty() {
            (writer.write_metadata("ssx.run", std::mem::take(&mut self.run.metadata)))
                .map_err(ViewError::Writer)?;
        }
        for (name, data) in std::mem::take(&mut self.run.files) {
            writer
                .attach(&McapAttachment {
                    log_time: 0,
                    create_time: 0,
                    name,
                    media_type: "application/json".into(),
                    data: Cow::Owned(data),
                })
                .map_err(ViewError::Writer)?;
        }
        let mut ch = Channels::new(&ctx, scene, RAYS_HZ, usize::MAX, Links::Embed)?;
        let inputs_channel =
            crate::publish::json_channel(&ctx, inputs::TOPIC, "ssx.Inputs", inputs::SCHEMA)?;
        let inputs = self.inputs.1.clone();
        let mut builds = Builds::default();
        // Every step's inputs queued so far, before the frame or reset that follows them; the
        // builds a swap involved attached first, once each.
        let mut write_inputs = move |messages: &mut u64,
                                     writer: &McapWriterHandle<BufWriter<File>>,
                                     state: &RecordState| {
            for p in inputs.try_iter() {
                let swaps = (p.swaps.iter())
                    .map(|s| builds.swap(s, writer))
                    .collect::<Result<Vec<_>, String>>();
                let swaps = swaps.unwrap_or_else(|why| {
                    fail(state, why);
                    Vec::new()
                });
                let data = inputs::encode(p.episode, p.step, &p.answers, swaps);
                inputs_channel.log_with_meta(&data, crate::publish::at(p.at));
                *messages += 1;
            }
        };
        let state = Arc::clone(&self.state);
        let stop = Arc::clone(&self.stop);
        let thread = std::thread::Builder::new()
            .name("ssx-record".into())
            .spawn(move || {
                // Channels close when their context goes: it lives as long as this thread.
                let _ctx = ctx;
                // The builds the run started with, hashed here (milliseconds a megabyte), before
                // the first message.
                if let Err(why) = Builds::record(&libraries, &writer) {
                    fail(&state, why);
                }
                drop(libraries);
                ch.publish_scene(0, None);
                // The header and the scene on disk now: a run killed before the first second
                // still leaves a file that reads.
                if let Err(e) = writer.flush() {
                    fail(&state, format!("cannot write: {e}"));
                }
                let mut flushed = Instant::now();
                // The chunk is closed once a second of wall time whatever the rate: checked
                // between messages too, for a writer that never catches up (a fast run's
                // lossless recording) and never leaves the loops below.
                let mut flush_due = || {
                    if flushed.elapsed() >= FLUSH_EVERY {
                        if let Err(e) = writer.flush() {
                            fail(&state, format!("cannot write: {e}"));
                        }
                        flushed = Instant::now();
                    }
                };
                loop {
                    let stopping = stop.load(Ordering::Acquire);
                    while let Some(side) = hub.0.record.queue.pop() {
                        ch.publish_side(&side);
                        flush_due();
                    }
                    while let Some(f) = frames.next() {
                        match &f.reset {
                            Some(r) => {
                                // What the daemon logged before the reset goes in before it.
                                while let Some(side) = hub.0.record.queue.pop() {
                                    ch.publish_side(&side);
                                }
                                write_inputs(&mut ch.messages, &writer, &state);
                                if let Err(e) = ch.reset(r) {
                                    fail(&state, format!("cannot record the reset: {e}"));
                                }
                            }
                            None => {
                                write_inputs(&mut ch.messages, &writer, &state);
                                ch.publish_frame(&f);
                            }
                        }
                        frames.recycle(f);
                        state.messages.store(ch.messages, Ordering::Relaxed);
                        flush_due();
                    }
                    state.messages.store(ch.messages, Ordering::Relaxed);
                    if stopping {
                        // The steps after the last frame.
                        write_inputs(&mut ch.messages, &writer, &state);
                        break;
                    }
                    flush_due();
                    std::thread::park_timeout(Duration::from_millis(20));
                }
                match writer.close() {
                    Ok(_) => state.finished.store(true, Ordering::Release),
                    Err(e) => fail(&state, format!("cannot finish the file: {e}")),
                }
            })
            .map_err(ViewError::thread("--record", "writer"))?;
        let t = thread.thread().clone();
        self.thread = Some(thread);
        Ok(t)
    }
}

/// The library builds a recording holds or knows: a swap attaches the build it brings in, and
/// the one it replaced (a replay starts from it), each once.
#[derive(Default)]
struct Builds {
    attached: std::collections::HashSet<String>,
}

impl Builds {
    /// The `ssx.libraries` record: each driver and sensor library the world opened, with the
    /// SHA-256 of its build.
    fn record(
        libraries: &[Arc<PluginLibrary>],
        writer: &McapWriterHandle<BufWriter<File>>,
    ) -> Result<(), String> {
        let mut record = BTreeMap::new();
        for l in libraries {
            record.insert(l.path().display().to_string(), l.sha256()?.to_string());
        }
        (writer.write_metadata(inputs::LIBRARIES, record)).map_err(|e| format!("cannot write: {e}"))
    }

    /// Attaches the builds of `swap` not attached yet; the swap as the message records it.
    fn swap(
        &mut self,
        swap: &SwappedBuild,
        writer: &McapWriterHandle<BufWriter<File>>,
    ) -> Result<inputs::RecordedSwap, String> {
        for lib in [&swap.replaced, &swap.build] {
            let sha = lib.sha256()?;
            if self.attached.contains(sha) {
                continue;
            }
            let data = (lib.bytes()).map_err(|e| {
                format!("cannot read the build of '{}': {e}", swap.library.display())
            })?;
            writer
                .attach(&McapAttachment {
                    log_time: 0,
                    create_time: 0,
                    name: inputs::build_name(sha, &swap.library),
                    media_type: "application/x-sharedlib".into(),
                    data: Cow::Owned(data),
                })
                .map_err(|e| format!("cannot attach a build: {e}"))?;
            self.attached.insert(sha.to_string());
        }
        Ok(inputs::RecordedSwap {
            library: swap.library.display().to_string(),
            sha256: swap.build.sha256()?.to_string(),
        })
    }
}

fn fail(state: &RecordState, message: String) {
    let mut e = state.error.lock().expect("not poisoned");
    if e.is_none() {
        tracing::error!(
            "recording {}: {message}",
            state
                .path
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        );
        *e = Some(message);
    }
}

impl Drop for Recorder {
    /// Writes what is queued, then the MCAP footer. A recording that never started (the scene
    /// failed to build) leaves no file behind.
    fn drop(&mut self) {
        if self.file.take().is_some()
            && let Some(p) = &self.state.path
        {
            let _ = std::fs::remove_file(p);
        }
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
