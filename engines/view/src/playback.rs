//! A recording read back for a replay (`ssxd replay`, docs/replay.md): what made the run (its
//! `ssx.run` record and the scene file), the resets with the step and seed each came at, and
//! every pose snapshot, keyed by episode and step. A file cut short by a kill is read up to its
//! last complete record. The file is read a piece at a time (a chunk at most in memory), so an
//! hour's recording replays in the memory a minute's does.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use foxglove::schemas::FrameTransforms;
use mcap::records::{Record, op};
use mcap::sans_io::linear_reader::{LinearReadEvent, LinearReader, LinearReaderOptions};
use prost::Message as _;
use serde::Deserialize;

use crate::ViewError;
use crate::publish::topics;

/// A reset as recorded on `/reset`: episode `episode` began after `step` steps of the one
/// before, with `seed`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedReset {
    /// The episode it began (the run's first world is episode 0).
    pub episode: u64,
    /// The steps the episode before had taken.
    pub step: u64,
    /// The seed it was made with.
    pub seed: u64,
}

/// Every body's pose after step `step` of episode `episode`, as `/tf` recorded it: x, y, z, then
/// the rotation's x, y, z, w, in body order (named in `frames`).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The episode (resets so far).
    pub episode: u64,
    /// Steps taken in the episode.
    pub step: u64,
    /// Each frame's pose.
    pub poses: Vec<[f64; 7]>,
    /// Each frame's name (`artifact/body`, then any camera's optical frame).
    pub frames: Arc<[String]>,
}

/// What a recording holds, in its order: a pose snapshot, a reset, or a step's inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The poses after a step.
    Snapshot(Snapshot),
    /// The world started over.
    Reset(RecordedReset),
    /// What the extensions answered the plugins in step `step` of episode `episode`, before
    /// the snapshot of that step (a reset's own message may come after the new episode's
    /// first inputs).
    Inputs {
        /// The episode.
        episode: u64,
        /// The step (1: the episode's first).
        step: u64,
        /// The answers, in artifact order.
        answers: Vec<ssx_core::tape::Answer>,
        /// The library swaps made at the step's start, before its physics.
        swaps: Vec<crate::inputs::RecordedSwap>,
    },
}

/// A recording read back: what made the run up front; the snapshots and resets as
/// [`Playback::events`] streams them (a long run's snapshots are never all held at once).
#[derive(Clone, Debug, Default)]
pub struct Playback {
    /// The `ssx.run` record (docs/view.md "What a recording says of its run").
    pub run: BTreeMap<String, String>,
    /// The files attached before the first message (the scene file): (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// The `ssx.libraries` record: each driver and sensor library the run opened (its path as
    /// the run found it) and the SHA-256 of the build it started with; empty in a recording
    /// made before it was kept.
    pub libraries: BTreeMap<String, String>,
    /// The builds attached (every build a swap brought in or replaced), by SHA-256.
    pub builds: HashMap<String, Arc<[u8]>>,
    path: PathBuf,
}

#[derive(Deserialize)]
struct Clock {
    step: u64,
    episode: u64,
}

#[derive(Deserialize)]
struct Reset {
    episode: u64,
    step: u64,
    seed: u64,
}

impl Playback {
    /// Reads the recording at `path`: its run record, the scene file (attached before any
    /// message), the libraries' record and the builds attached. The chunks are passed over
    /// whole (read, not opened).
    pub fn read(path: &Path) -> Result<Self, ViewError> {
        let bad = |why: String| ViewError::Playback {
            path: path.to_path_buf(),
            why,
        };
        let mut file = File::open(path).map_err(|e| bad(e.to_string()))?;
        let mut magic = [0; MAGIC.len()];
        let starts = file.read_exact(&mut magic).is_ok_and(|()| magic == *MAGIC);
        if !starts {
            return Err(bad(
                "not an MCAP file (its first bytes are not MCAP's magic)".into(),
            ));
        }
        // Chunks whole, not opened: the run record and the attachments are never in one.
        let mut records = Records::open(path, true).map_err(|e| bad(e.to_string()))?;
        let (mut run, mut files) = (BTreeMap::new(), Vec::new());
        let (mut libraries, mut builds) = (BTreeMap::new(), HashMap::new());
        let mut messages = false;
        // A killed run's last, unfinished record ends the reading as the file's end does.
        while let Some(Ok(item)) = records.next() {
            match item {
                Item::Record(Record::Metadata(m)) if m.name == "ssx.run" => run = m.metadata,
                Item::Record(Record::Metadata(m)) if m.name == crate::inputs::LIBRARIES => {
                    libraries = m.metadata
                }
                Item::Record(Record::Attachment { header, data, .. }) => {
                    match crate::inputs::build_sha256(&header.name) {
                        Some(sha) => {
                            builds.insert(sha.to_string(), Arc::from(data.into_owned()));
                        }
                        None if !messages => files.push((header.name, data.into_owned())),
                        None => {}
                    }
                }
                Item::Chunk | Item::Record(Record::Message { .. }) => messages = true,
                Item::Record(_) => {}
            }
        }
        if run.is_empty() {
            return Err(bad(
                "it has no 'ssx.run' record: it was not made by ssx, or by a version before the run record".into(),
            ));
        }
        Ok(Playback {
            run,
            files,
            libraries,
            builds,
            path: path.to_path_buf(),
        })
    }

    /// The snapshots and resets in the order they were recorded, read from the file as they
    /// are asked for.
    pub fn events(&self) -> Result<Events, String> {
        Ok(Events {
            records: Records::open(&self.path, false).map_err(|e| e.to_string())?,
            channels: HashMap::new(),
            clock: None,
            frames: Arc::from(Vec::new()),
            cut_short: false,
            finished: false,
        })
    }

    /// A value of the `ssx.run` record.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.run.get(key).map(String::as_str)
    }

    /// The scene file's name and bytes, as the run read them.
    pub fn scene_file(&self) -> Option<(&str, &[u8])> {
        let name = self.value("scene_file")?;
        (self.files.iter())
            .find(|(n, _)| n == name)
            .map(|(n, b)| (n.as_str(), &b[..]))
    }

    /// Whether the recording has what the extensions answered the plugins (`/inputs`: every
    /// recording since they were recorded), so that a replay answers from it.
    pub fn has_inputs(&self) -> bool {
        self.value("inputs") == Some(crate::inputs::TOPIC)
    }

    /// The directory the scene's relative paths were found in, if the recording says.
    pub fn scene_dir(&self) -> Option<PathBuf> {
        self.value("scene_dir").map(PathBuf::from)
    }
}

/// A recording's records, read from its file a piece at a time.
struct Records {
    file: File,
    reader: LinearReader,
}

impl Records {
    /// The records of the file at `path`; `whole_chunks`: chunks as records of their own, not
    /// opened (else the records in them, decompressed).
    fn open(path: &Path, whole_chunks: bool) -> std::io::Result<Self> {
        // A bound on a record's length: a killed run's last chunk can keep the writer's
        // placeholder length, which the reader (mcap 0.26) would add to and overflow.
        let options = LinearReaderOptions::default()
            .with_emit_chunks(whole_chunks)
            .with_record_length_limit(RECORD_LIMIT);
        Ok(Records {
            file: File::open(path)?,
            reader: LinearReader::new_with_options(options),
        })
    }

    /// The next record a playback reads; `None` at the file's end, `Some(Err)` where it ends
    /// early or a record does not parse (a killed run's last, unfinished record).
    fn next(&mut self) -> Option<Result<Item, String>> {
        loop {
            match self.reader.next_event()? {
                Err(e) => return Some(Err(e.to_string())),
                Ok(LinearReadEvent::ReadRequest(need)) => {
                    // At least a buffer's worth at a time: the hint is often a record header.
                    let buffer = self.reader.insert(need.max(READ_SIZE));
                    match self.file.read(buffer) {
                        // The file ends inside a record (a killed run's last one).
                        Ok(0) => return Some(Err("the file ends inside a record".into())),
                        Ok(n) => self.reader.notify_read(n),
                        Err(e) => return Some(Err(e.to_string())),
                    }
                }
                Ok(LinearReadEvent::Record { opcode, data }) => {
                    // Only what a playback reads is kept (a chunk's bytes are not).
                    match opcode {
                        op::METADATA | op::ATTACHMENT | op::CHANNEL | op::MESSAGE => {}
                        op::CHUNK => return Some(Ok(Item::Chunk)),
                        _ => continue,
                    }
                    return Some(
                        mcap::parse_record(opcode, data)
                            .map(|r| Item::Record(r.into_owned()))
                            .map_err(|e| e.to_string()),
                    );
                }
            }
        }
    }
}

/// A record a playback reads, or a chunk passed over whole.
enum Item {
    Record(Record<'static>),
    Chunk,
}

/// The longest record read (a chunk is about a megabyte; an attached build, tens).
const RECORD_LIMIT: usize = 1 << 32;

/// Bytes asked of the file at a time, at least.
const READ_SIZE: usize = 1 << 16;

/// A recording's snapshots and resets ([`Playback::events`]).
pub struct Events {
    records: Records,
    /// Each channel's topic, by id, as the channel records come.
    channels: HashMap<u16, Arc<str>>,
    /// The last /clock message, and its log time: the /tf message after it at the same time is
    /// its snapshot (a reset's snapshot shares its log time with the one before it, so the
    /// time alone does not say which).
    clock: Option<(u64, Clock)>,
    /// The frames' names, shared by the snapshots that have the same.
    frames: Arc<[String]>,
    cut_short: bool,
    finished: bool,
}

impl Events {
    /// Whether the file ended before its end (a killed run): known once the events are read.
    pub fn cut_short(&self) -> bool {
        self.cut_short || !self.finished
    }

    fn event(&mut self, log_time: u64, topic: &str, data: &[u8]) -> Result<Option<Event>, String> {
        match topic {
            topics::CLOCK => {
                let c: Clock =
                    serde_json::from_slice(data).map_err(|e| format!("a /clock message: {e}"))?;
                self.clock = Some((log_time, c));
            }
            crate::inputs::TOPIC => {
                let i = crate::inputs::decode(data)?;
                return Ok(Some(Event::Inputs {
                    episode: i.episode,
                    step: i.step,
                    answers: i.answers,
                    swaps: i.swaps,
                }));
            }
            topics::RESET => {
                let r: Reset =
                    serde_json::from_slice(data).map_err(|e| format!("a /reset message: {e}"))?;
                return Ok(Some(Event::Reset(RecordedReset {
                    episode: r.episode,
                    step: r.step,
                    seed: r.seed,
                })));
            }
            topics::TF => {
                let Some((at, c)) = self.clock.take() else {
                    return Ok(None);
                };
                if at != log_time {
                    return Ok(None);
                }
                let decoded =
                    FrameTransforms::decode(data).map_err(|e| format!("a /tf message: {e}"))?;
                let mut poses = Vec::with_capacity(decoded.transforms.len());
                let same = decoded.transforms.len() == self.frames.len()
                    && (decoded.transforms.iter())
                        .zip(self.frames.iter())
                        .all(|(t, f)| t.child_frame_id == *f);
                if !same {
                    self.frames = (decoded.transforms.iter())
                        .map(|t| t.child_frame_id.clone())
                        .collect();
                }
                for t in decoded.transforms {
                    let v = t.translation.unwrap_or_default();
                    let q = t.rotation.unwrap_or_default();
                    poses.push([v.x, v.y, v.z, q.x, q.y, q.z, q.w]);
                }
                return Ok(Some(Event::Snapshot(Snapshot {
                    episode: c.episode,
                    step: c.step,
                    poses,
                    frames: Arc::clone(&self.frames),
                })));
            }
            _ => {}
        }
        Ok(None)
    }
}

impl Iterator for Events {
    type Item = Result<Event, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let record = match self.records.next() {
                None => {
                    self.finished = true;
                    return None;
                }
                Some(Ok(Item::Record(r))) => r,
                Some(Ok(Item::Chunk)) => continue,
                Some(Err(_)) => {
                    // A killed run's last, unfinished chunk: what came before it is all.
                    self.cut_short = true;
                    return None;
                }
            };
            let (header, data) = match record {
                Record::Channel(c) => {
                    self.channels.insert(c.id, Arc::from(c.topic));
                    continue;
                }
                Record::Message { header, data } => (header, data),
                _ => continue,
            };
            let Some(topic) = self.channels.get(&header.channel_id) else {
                return Some(Err(format!(
                    "a message on channel {} before that channel's record",
                    header.channel_id
                )));
            };
            let topic = Arc::clone(topic);
            match self.event(header.log_time, &topic, &data) {
                Ok(None) => continue,
                Ok(Some(e)) => return Some(Ok(e)),
                Err(why) => return Some(Err(why)),
            }
        }
    }
}

const MAGIC: &[u8] = b"\x89MCAP0\r\n";
