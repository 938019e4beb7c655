//! A recording read back for a replay (`ssxd replay`, docs/replay.md): what made the run (its
//! `ssx.run` record and the scene file), the resets with the step and seed each came at, and
//! every pose snapshot, keyed by episode and step. A file cut short by a kill is read up to its
//! last complete record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    pub frames: Vec<String>,
}

/// A recording read back.
#[derive(Clone, Debug, Default)]
pub struct Playback {
    /// The `ssx.run` record (docs/view.md "What a recording says of its run").
    pub run: BTreeMap<String, String>,
    /// The files attached: (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// The resets, in order.
    pub resets: Vec<RecordedReset>,
    /// The pose snapshots, in order.
    pub snapshots: Vec<Snapshot>,
    /// False when the file was cut short (a killed run): what it holds is read up to there.
    pub complete: bool,
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
    /// Reads the recording at `path`.
    pub fn read(path: &Path) -> Result<Self, ViewError> {
        let bad = |why: String| ViewError::Playback {
            path: path.to_path_buf(),
            why,
        };
        let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        let mut p = Self::read_bytes(&bytes).map_err(bad)?;
        if p.run.is_empty() {
            return Err(ViewError::Playback {
                path: path.to_path_buf(),
                why: "it has no 'ssx.run' record: it was not made by ssx, or by a version before the run record".into(),
            });
        }
        p.complete = p.complete && bytes.ends_with(MAGIC);
        Ok(p)
    }

    fn read_bytes(bytes: &[u8]) -> Result<Self, String> {
        if !bytes.starts_with(MAGIC) {
            return Err("not an MCAP file (its first bytes are not MCAP's magic)".into());
        }
        let mut p = Playback {
            complete: true,
            ..Playback::default()
        };
        let records = mcap::read::LinearReader::new_with_options(
            bytes,
            mcap::read::Options::IgnoreEndMagic.into(),
        )
        .map_err(|e| e.to_string())?;
        for r in records {
            match r {
                Ok(mcap::records::Record::Metadata(m)) if m.name == "ssx.run" => p.run = m.metadata,
                Ok(mcap::records::Record::Attachment { header, data, .. }) => {
                    p.files.push((header.name, data.into_owned()))
                }
                Ok(_) => {}
                Err(_) => break, // a killed run's last, unfinished record
            }
        }
        // Each /tf message follows the /clock message of its snapshot, at the same log time
        // (a reset's snapshot shares its log time with the last one before it, so the time
        // alone does not say which).
        let mut clock: Option<(u64, Clock)> = None;
        let messages = mcap::MessageStream::new_with_options(
            bytes,
            mcap::read::Options::IgnoreEndMagic.into(),
        )
        .map_err(|e| e.to_string())?;
        for m in messages {
            let Ok(m) = m else {
                p.complete = false;
                break;
            };
            match m.channel.topic.as_str() {
                topics::CLOCK => {
                    let c: Clock = serde_json::from_slice(&m.data)
                        .map_err(|e| format!("a /clock message: {e}"))?;
                    clock = Some((m.log_time, c));
                }
                topics::RESET => {
                    let r: Reset = serde_json::from_slice(&m.data)
                        .map_err(|e| format!("a /reset message: {e}"))?;
                    p.resets.push(RecordedReset {
                        episode: r.episode,
                        step: r.step,
                        seed: r.seed,
                    });
                }
                topics::TF => {
                    let Some((at, c)) = clock.take() else {
                        continue;
                    };
                    if at != m.log_time {
                        continue;
                    }
                    let decoded = FrameTransforms::decode(&m.data[..])
                        .map_err(|e| format!("a /tf message: {e}"))?;
                    let (mut poses, mut frames) = (Vec::new(), Vec::new());
                    for t in decoded.transforms {
                        let v = t.translation.unwrap_or_default();
                        let q = t.rotation.unwrap_or_default();
                        poses.push([v.x, v.y, v.z, q.x, q.y, q.z, q.w]);
                        frames.push(t.child_frame_id);
                    }
                    p.snapshots.push(Snapshot {
                        episode: c.episode,
                        step: c.step,
                        poses,
                        frames,
                    });
                }
                _ => {}
            }
        }
        p.snapshots.sort_by_key(|s| (s.episode, s.step));
        p.resets.sort_by_key(|r| r.episode);
        Ok(p)
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

const MAGIC: &[u8] = b"\x89MCAP0\r\n";
