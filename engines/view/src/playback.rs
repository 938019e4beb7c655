//! A recording read back for a replay (`ssxd replay`, docs/replay.md): what made the run (its
//! `ssx.run` record and the scene file), the resets with the step and seed each came at, and
//! every pose snapshot, keyed by episode and step. A file cut short by a kill is read up to its
//! last complete record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use foxglove::schemas::FrameTransforms;
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

/// What a recording holds, in its order: a pose snapshot, or a reset.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The poses after a step.
    Snapshot(Snapshot),
    /// The world started over.
    Reset(RecordedReset),
}

/// A recording read back: what made the run up front; the snapshots and resets as
/// [`Playback::events`] streams them (a long run's snapshots are never all held at once).
#[derive(Clone, Debug, Default)]
pub struct Playback {
    /// The `ssx.run` record (docs/view.md "What a recording says of its run").
    pub run: BTreeMap<String, String>,
    /// The files attached: (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    bytes: Vec<u8>,
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
    /// Reads the recording at `path`: its run record and attachments.
    pub fn read(path: &Path) -> Result<Self, ViewError> {
        let bad = |why: String| ViewError::Playback {
            path: path.to_path_buf(),
            why,
        };
        let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        if !bytes.starts_with(MAGIC) {
            return Err(bad(
                "not an MCAP file (its first bytes are not MCAP's magic)".into(),
            ));
        }
        let mut p = Playback {
            bytes,
            ..Playback::default()
        };
        let records = mcap::read::LinearReader::new_with_options(
            &p.bytes,
            mcap::read::Options::IgnoreEndMagic.into(),
        )
        .map_err(|e| bad(e.to_string()))?;
        let (mut run, mut files) = (BTreeMap::new(), Vec::new());
        for r in records {
            match r {
                Ok(mcap::records::Record::Metadata(m)) if m.name == "ssx.run" => run = m.metadata,
                Ok(mcap::records::Record::Attachment { header, data, .. }) => {
                    files.push((header.name, data.into_owned()))
                }
                Ok(_) => {}
                Err(_) => break, // a killed run's last, unfinished record
            }
        }
        if run.is_empty() {
            return Err(bad(
                "it has no 'ssx.run' record: it was not made by ssx, or by a version before the run record".into(),
            ));
        }
        (p.run, p.files) = (run, files);
        Ok(p)
    }

    /// The snapshots and resets in the order they were recorded.
    pub fn events(&self) -> Result<Events<'_>, String> {
        Ok(Events {
            messages: mcap::MessageStream::new_with_options(
                &self.bytes,
                mcap::read::Options::IgnoreEndMagic.into(),
            )
            .map_err(|e| e.to_string())?,
            clock: None,
            frames: Arc::from(Vec::new()),
            cut_short: false,
            finished: self.bytes.ends_with(MAGIC),
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

    /// The directory the scene's relative paths were found in, if the recording says.
    pub fn scene_dir(&self) -> Option<PathBuf> {
        self.value("scene_dir").map(PathBuf::from)
    }
}

/// A recording's snapshots and resets ([`Playback::events`]).
pub struct Events<'a> {
    messages: mcap::MessageStream<'a>,
    /// The last /clock message, and its log time: the /tf message after it at the same time is
    /// its snapshot (a reset's snapshot shares its log time with the one before it, so the
    /// time alone does not say which).
    clock: Option<(u64, Clock)>,
    /// The frames' names, shared by the snapshots that have the same.
    frames: Arc<[String]>,
    cut_short: bool,
    finished: bool,
}

impl Events<'_> {
    /// Whether the file ended before its end (a killed run): known once the events are read.
    pub fn cut_short(&self) -> bool {
        self.cut_short || !self.finished
    }

    fn event(&mut self, m: mcap::Message<'_>) -> Result<Option<Event>, String> {
        match m.channel.topic.as_str() {
            topics::CLOCK => {
                let c: Clock = serde_json::from_slice(&m.data)
                    .map_err(|e| format!("a /clock message: {e}"))?;
                self.clock = Some((m.log_time, c));
            }
            topics::RESET => {
                let r: Reset = serde_json::from_slice(&m.data)
                    .map_err(|e| format!("a /reset message: {e}"))?;
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
                if at != m.log_time {
                    return Ok(None);
                }
                let decoded = FrameTransforms::decode(&m.data[..])
                    .map_err(|e| format!("a /tf message: {e}"))?;
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

impl Iterator for Events<'_> {
    type Item = Result<Event, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let m = match self.messages.next()? {
                Ok(m) => m,
                Err(_) => {
                    // A killed run's last, unfinished chunk: what came before it is all.
                    self.cut_short = true;
                    return None;
                }
            };
            match self.event(m) {
                Ok(None) => continue,
                Ok(Some(e)) => return Some(Ok(e)),
                Err(why) => return Some(Err(why)),
            }
        }
    }
}

const MAGIC: &[u8] = b"\x89MCAP0\r\n";
