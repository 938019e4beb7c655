//! Swapping a driver or sensor library in a running world.
//!
//! Everything slow happens on the swap thread (`ssx-swap`): copying the new build, opening it,
//! and creating every instance the run has of that library, from the same descriptors, the
//! same seeds and the same init. The stepping thread only exchanges the instances between two
//! steps ([`crate::Environment`] polls [`Swapper::ready`]) and hands the old ones back to the
//! swap thread, which destroys them; the old library unloads when its last instance is gone.
//! A new build that does not load, whose `create` fails for any instance, or whose `restore`
//! refuses an old instance's state (the hand-over, at the switch) is refused whole: nothing
//! changes in the run.
//!
//! With `--watch-plugins` a watcher thread polls the files of the run's swappable libraries
//! and asks for a swap once a changed file has stood still for [`SETTLE`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crossbeam::channel::{Receiver, Sender, unbounded};

use crate::abi::PluginLibrary;
use crate::guard::{self, Label, Phase};
use crate::plugin::{Driver, PluginInit, Sensor};

/// How long a changed library file must stay unchanged before the watcher swaps it in.
pub const SETTLE: Duration = Duration::from_millis(300);
/// How often the watcher looks at the files.
const POLL: Duration = Duration::from_millis(100);

/// Where an instance lives in the Environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `driver_shards[shard].items[index]`.
    Driver {
        /// The worker's share.
        shard: u32,
        /// The artifact in it.
        index: u32,
    },
    /// `sensor_shards[shard].items[index].sensors[sensor]`.
    Sensor {
        /// The worker's share.
        shard: u32,
        /// The artifact in it.
        index: u32,
        /// The sensor of the artifact.
        sensor: u32,
    },
}

/// How to make one instance again.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// The library as the scene found it (absolute).
    pub library: PathBuf,
    /// The plugin's name in it.
    pub plugin: String,
    /// The descriptor, with the scene's overrides applied (the spec's, shared).
    pub descriptor: std::sync::Arc<serde_json::Value>,
    /// What it was created with (artifact, seed, timestep, counts).
    pub init: PluginInit,
    /// Where it lives.
    pub slot: Slot,
    /// What crash reports call it.
    pub guard: &'static Label,
}

/// A new plugin instance, made on the swap thread.
pub enum Fresh {
    /// A driver.
    Driver(Box<dyn Driver>),
    /// A sensor.
    Sensor(Box<dyn Sensor>),
}

/// A new build, loaded and instantiated, waiting for the switch.
pub struct Prepared {
    /// The library as the scene names it.
    pub library: PathBuf,
    /// The new build (the loader keeps it from the switch on).
    pub lib: Arc<PluginLibrary>,
    /// The new instances, slot by slot.
    pub instances: Vec<(Slot, Fresh)>,
    /// When the swap was asked for.
    pub requested: Instant,
    /// The request's ticket.
    pub ticket: u64,
}

/// What became of a request.
pub enum Outcome {
    /// Ready to switch.
    Ready(Prepared),
    /// Refused; the run keeps the old plugins.
    Refused {
        /// The request's ticket.
        ticket: u64,
        /// The library, as the scene names it.
        library: PathBuf,
        /// Why, naming the artifact and plugin when an instance failed.
        reason: String,
    },
}

/// What the swap thread does.
enum Job {
    Prepare {
        library: PathBuf,
        /// The file to copy the new build from, when not `library`'s own (a replay's).
        build: Option<PathBuf>,
        requested: Instant,
        ticket: u64,
    },
    /// Old instances and libraries to destroy off the stepping thread.
    Retire(Vec<Box<dyn Send>>),
}

/// The swap thread and, with `--watch-plugins`, the watcher.
pub struct Swapper {
    jobs: Option<Sender<Job>>,
    outcomes: Receiver<Outcome>,
    thread: Option<JoinHandle<()>>,
    watcher: Option<(Sender<()>, JoinHandle<()>)>,
    recipes: Arc<Vec<Recipe>>,
    /// The next request's ticket (requests and the watcher's swaps share the count).
    tickets: Arc<AtomicU64>,
}

impl Swapper {
    /// The swap thread, for the run's swappable instances; copies go to `copies`.
    pub fn start(recipes: Vec<Recipe>, copies: Arc<tempfile::TempDir>) -> std::io::Result<Swapper> {
        let recipes = Arc::new(recipes);
        let (jobs, job_rx) = unbounded::<Job>();
        let (done, outcomes) = unbounded::<Outcome>();
        let r = Arc::clone(&recipes);
        let thread = std::thread::Builder::new()
            .name("ssx-swap".into())
            .spawn(move || {
                for job in job_rx {
                    match job {
                        Job::Prepare {
                            library,
                            build,
                            requested,
                            ticket,
                        } => {
                            let from = build.as_deref().unwrap_or(&library);
                            let outcome = match prepare(&library, from, &r, &copies) {
                                Ok((lib, instances)) => Outcome::Ready(Prepared {
                                    library,
                                    lib,
                                    instances,
                                    requested,
                                    ticket,
                                }),
                                Err(reason) => Outcome::Refused {
                                    ticket,
                                    library,
                                    reason,
                                },
                            };
                            if done.send(outcome).is_err() {
                                break;
                            }
                        }
                        Job::Retire(old) => drop(old),
                    }
                }
            })?;
        Ok(Swapper {
            jobs: Some(jobs),
            outcomes,
            thread: Some(thread),
            watcher: None,
            recipes,
            tickets: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The distinct libraries that can be swapped.
    pub fn libraries(&self) -> Vec<PathBuf> {
        let mut l: Vec<PathBuf> = self.recipes.iter().map(|r| r.library.clone()).collect();
        l.sort();
        l.dedup();
        l
    }

    /// Asks for `library` (as the scene names it, or its file name) to be swapped for the file's
    /// current contents; returns the library found and the request's ticket. Fails at once when
    /// no instance of the run comes from it.
    pub fn request(&self, library: &Path) -> Result<(PathBuf, u64), String> {
        self.request_build(library, None)
    }

    /// As [`Swapper::request`], the new build copied from `build` instead of the library's
    /// own file when given.
    pub fn request_build(
        &self,
        library: &Path,
        build: Option<&Path>,
    ) -> Result<(PathBuf, u64), String> {
        let known = self.libraries();
        let wanted = std::fs::canonicalize(library).ok();
        let bare = library.components().count() == 1;
        let found = known.iter().find(|k| {
            k.as_path() == library
                || (wanted.is_some() && std::fs::canonicalize(k).ok() == wanted)
                || (bare && k.file_name() == Some(library.as_os_str()))
        });
        let Some(found) = found else {
            let names: Vec<String> = known.iter().map(|k| k.display().to_string()).collect();
            return Err(format!(
                "no driver or sensor of this run comes from '{}' (swappable: {})",
                library.display(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ));
        };
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        self.send(Job::Prepare {
            library: found.clone(),
            build: build.map(Path::to_path_buf),
            requested: Instant::now(),
            ticket,
        });
        Ok((found.clone(), ticket))
    }

    /// A prepared swap or a refusal, if one is waiting (never blocks).
    pub fn ready(&self) -> Option<Outcome> {
        self.outcomes.try_recv().ok()
    }

    /// The next prepared swap or refusal, waiting for it (`None` once the thread is gone).
    pub fn wait(&self) -> Option<Outcome> {
        self.outcomes.recv().ok()
    }

    /// Hands old instances (and the library they hold) to the swap thread to destroy.
    pub fn retire(&self, old: Vec<Box<dyn Send>>) {
        self.send(Job::Retire(old));
    }

    fn send(&self, job: Job) {
        if let Some(j) = &self.jobs {
            // The thread ends only when `jobs` is dropped: the send cannot fail before.
            let _ = j.send(job);
        }
    }

    /// Starts the watcher: a changed library file that has stood still for [`SETTLE`] is
    /// swapped in, once per change.
    pub fn watch(&mut self) -> std::io::Result<()> {
        if self.watcher.is_some() {
            return Ok(());
        }
        let Some(jobs) = self.jobs.clone() else {
            return Ok(());
        };
        let files = self.libraries();
        let (stop, stopped) = unbounded::<()>();
        let tickets = Arc::clone(&self.tickets);
        let thread = std::thread::Builder::new()
            .name("ssx-watch".into())
            .spawn(move || watch(files, jobs, stopped, &tickets))?;
        self.watcher = Some((stop, thread));
        Ok(())
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.watcher.take() {
            drop(stop);
            let _ = thread.join();
        }
        // Closing the queue ends the thread after the jobs already queued.
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Opens a fresh copy of `build` (`library`'s file, or a replay's copy of a recorded build) as
/// `library` and creates every instance the run has of it. The first
/// failure refuses the whole build; what was created is destroyed again (here, off the
/// stepping thread).
fn prepare(
    library: &Path,
    build: &Path,
    recipes: &[Recipe],
    copies: &Arc<tempfile::TempDir>,
) -> Result<(Arc<PluginLibrary>, Instances), String> {
    let lib = PluginLibrary::open_copy_of(library, build, copies)?;
    let mut made = Vec::new();
    for r in recipes.iter().filter(|r| r.library == library) {
        let _doing = guard::enter(r.guard, Phase::Create, 0);
        let fresh = match r.slot {
            Slot::Driver { .. } => lib
                .new_driver(&r.plugin, &r.descriptor, &r.init)
                .map(Fresh::Driver),
            Slot::Sensor { .. } => lib
                .new_sensor(&r.plugin, &r.descriptor, &r.init)
                .map(Fresh::Sensor),
        }
        .map_err(|m| {
            format!(
                "artifact '{}': {} '{}' cannot be created from the new build: {m}",
                r.init.artifact,
                match r.slot {
                    Slot::Driver { .. } => "driver",
                    Slot::Sensor { .. } => "sensor",
                },
                r.plugin
            )
        })?;
        made.push((r.slot, fresh));
    }
    Ok((lib, made))
}

/// New instances, slot by slot.
type Instances = Vec<(Slot, Fresh)>;

/// A file's identity and contents, as far as polling can tell.
type Signature = Option<(u64, SystemTime, u64)>;

fn signature(path: &Path) -> Signature {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?, m.ino()))
}

/// The watcher's loop: per file, the signature last swapped in (or loaded), and a changed one
/// with the time it was first seen; a change that holds for [`SETTLE`] becomes a request.
fn watch(files: Vec<PathBuf>, jobs: Sender<Job>, stop: Receiver<()>, tickets: &AtomicU64) {
    let mut loaded: Vec<Signature> = files.iter().map(|f| signature(f)).collect();
    let mut seen: Vec<(Signature, Instant)> = loaded.iter().map(|s| (*s, Instant::now())).collect();
    while let Err(crossbeam::channel::RecvTimeoutError::Timeout) = stop.recv_timeout(POLL) {
        for (i, file) in files.iter().enumerate() {
            let now = signature(file);
            if now != seen[i].0 {
                seen[i] = (now, Instant::now());
                continue;
            }
            if now.is_some() && now != loaded[i] && seen[i].1.elapsed() >= SETTLE {
                loaded[i] = now;
                tracing::info!(library = %file.display(), "the library changed on disk: swapping it in");
                let job = Job::Prepare {
                    library: file.clone(),
                    build: None,
                    requested: Instant::now(),
                    ticket: tickets.fetch_add(1, Ordering::Relaxed),
                };
                if jobs.send(job).is_err() {
                    return;
                }
            }
        }
    }
}
