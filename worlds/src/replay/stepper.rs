//! A recorded run stepped through, one step at a time: before each step, the events of the
//! recording are read until everything that step needs is known (its answers and swaps, and
//! whether the run reset before it), then the step is taken with them, and with `verify`
//! every snapshot recorded for it is compared. A thread of its own reads the recording
//! (decompression, decoding) meanwhile, a bounded number of events ahead, in the file's order.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;

use ssx_core::tape::Answer;
use ssx_core::{Environment, SsxError};
use ssx_view::inputs::RecordedSwap;
use ssx_view::{Event, Playback, RecordedReset, Snapshot};

use super::builds::Builds;
use super::{Divergence, ReplayReport};

/// Events the reading thread hands over at a time: one hand-over (a wake-up of the other
/// thread) for this many, not one an event.
const BATCH: usize = 64;
/// Batches the reading thread reads at most ahead of the stepping.
const READ_AHEAD: usize = 4;

/// What [`Replayer::step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One step, with the run's inputs for it.
    Stepped,
    /// The world started over where the run's did, with its seed (no step taken).
    Reset,
    /// The recording has nothing past this step: the replay is over.
    Ended,
    /// The replay left the run: a plugin asked what the run's did not
    /// ([`ReplayReport::asked_otherwise`]) or, verifying, a pose differs
    /// ([`ReplayReport::divergence`]). The step was taken.
    Differs,
}

/// What the reading thread hands over.
enum Read {
    Event(Event),
    End { cut_short: bool },
    Failed(String),
}

/// A step's recorded inputs.
#[derive(Default)]
struct Inputs {
    answers: Vec<Answer>,
    swaps: Vec<RecordedSwap>,
}

/// Steps a world through a recorded run ([`super::open_replay`]).
pub struct Replayer {
    /// For messages: the recording's path.
    path: String,
    events: Option<Receiver<Vec<Read>>>,
    /// The batch being taken from.
    batch: std::vec::IntoIter<Read>,
    reader: Option<JoinHandle<()>>,
    builds: Builds,
    verify: bool,
    /// The furthest (episode, step) an event read so far belongs to (a reset: its episode's
    /// step 0).
    seen: (u64, u64),
    /// The furthest snapshot read so far.
    seen_snapshot: (u64, u64),
    /// Each step's answers and swaps, by episode and step, until the step is taken.
    inputs: BTreeMap<(u64, u64), Inputs>,
    /// The resets read and not yet made, by the episode they begin.
    resets: BTreeMap<u64, RecordedReset>,
    /// Snapshots read and not yet compared (`verify`).
    snapshots: VecDeque<Snapshot>,
    /// The episode the world is in.
    episode: u64,
    ended: bool,
    report: ReplayReport,
}

impl Replayer {
    /// Starts reading the recording `p` (at `path`).
    pub(super) fn start(
        path: &Path,
        p: Arc<Playback>,
        builds: Builds,
        verify: bool,
    ) -> Result<Self, String> {
        let mut events = p.events()?;
        let (tx, rx) = sync_channel::<Vec<Read>>(READ_AHEAD);
        let reader = std::thread::Builder::new()
            .name("ssx-replay-read".into())
            .spawn(move || {
                let mut batch = Vec::with_capacity(BATCH);
                for e in &mut events {
                    let failed = e.is_err();
                    batch.push(match e {
                        Ok(e) => Read::Event(e),
                        Err(why) => Read::Failed(why),
                    });
                    if failed {
                        let _ = tx.send(batch);
                        return;
                    }
                    // A send fails once the replay stopped early.
                    if batch.len() == BATCH
                        && tx
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_err()
                    {
                        return;
                    }
                }
                batch.push(Read::End {
                    cut_short: events.cut_short(),
                });
                let _ = tx.send(batch);
            })
            .map_err(|e| format!("cannot start the reading thread: {e}"))?;
        Ok(Replayer {
            path: path.display().to_string(),
            events: Some(rx),
            batch: Vec::new().into_iter(),
            reader: Some(reader),
            builds,
            verify,
            seen: (0, 0),
            seen_snapshot: (0, 0),
            inputs: BTreeMap::new(),
            resets: BTreeMap::new(),
            snapshots: VecDeque::new(),
            episode: 0,
            ended: false,
            report: ReplayReport {
                inputs: p.has_inputs(),
                complete: true,
                ..ReplayReport::default()
            },
        })
    }

    /// What the replay did so far.
    pub fn report(&self) -> &ReplayReport {
        &self.report
    }

    /// [`Replayer::report`], to change (a stop asked for).
    pub fn report_mut(&mut self) -> &mut ReplayReport {
        &mut self.report
    }

    /// The report, the replay over.
    pub fn finish(self) -> ReplayReport {
        self.report.clone()
    }

    /// The episode the world is in (resets made so far).
    pub fn episode(&self) -> u64 {
        self.episode
    }

    /// Takes the next step of the run (or makes the reset that came before it) in `env`.
    pub fn step(&mut self, env: &mut Environment) -> Result<Step, SsxError> {
        let next = (self.episode, env.steps() + 1);
        self.read_past(next)?;
        // Step 0 of an episode is compared too before the world moves on.
        if self.verify_now(env)? {
            return Ok(Step::Differs);
        }
        // The reset that began the next episode, once any of that episode's events was read.
        if self.seen.0 > self.episode {
            while !self.ended && !self.resets.contains_key(&(self.episode + 1)) {
                self.read()?;
            }
        }
        if let Some(r) = self.resets.get(&(self.episode + 1)).copied()
            && r.step <= env.steps()
        {
            let seed = (r.seed != env.config().seed).then_some(r.seed);
            env.reset(seed)?;
            self.resets.remove(&r.episode);
            (self.episode, self.report.resets) = (r.episode, self.report.resets + 1);
            // The old episode's answers past the reset were never asked for in the run.
            let episode = self.episode;
            self.inputs.retain(|&(e, _), _| e >= episode);
            return Ok(Step::Reset);
        }
        if self.seen < next {
            // Nothing recorded past the step the world is at.
            return Ok(Step::Ended);
        }
        let inputs = self.inputs.remove(&next).unwrap_or_default();
        for swap in &inputs.swaps {
            self.builds.swap_in(env, swap, self.episode)?;
            self.report.swaps += 1;
        }
        if self.report.inputs {
            env.load_answers(inputs.answers);
        }
        env.step()?;
        self.report.steps += 1;
        if let Some(what) = env.answers_difference() {
            self.report.asked_otherwise = Some((self.episode, what));
            return Ok(Step::Differs);
        }
        if self.verify_now(env)? {
            return Ok(Step::Differs);
        }
        Ok(Step::Stepped)
    }

    /// Reads events until one past `point` (or the end): then every input of `point` is known,
    /// since a step's inputs are recorded in step order, before the snapshot of their step.
    fn read_past(&mut self, point: (u64, u64)) -> Result<(), SsxError> {
        while !self.ended && self.seen <= point {
            self.read()?;
        }
        Ok(())
    }

    /// Reads one event.
    fn read(&mut self) -> Result<(), SsxError> {
        if self.batch.as_slice().is_empty()
            && let Some(Ok(batch)) = self.events.as_ref().map(Receiver::recv)
        {
            self.batch = batch.into_iter();
        }
        let event = match self.batch.next() {
            Some(Read::Event(e)) => e,
            Some(Read::End { cut_short }) => {
                self.ended = true;
                self.report.complete = !cut_short;
                return Ok(());
            }
            Some(Read::Failed(why)) => {
                return Err(SsxError::Config(format!(
                    "cannot replay '{}': {why}",
                    self.path
                )));
            }
            None => {
                return Err(SsxError::Config(format!(
                    "cannot replay '{}': its reading stopped on a panic in the MCAP reader",
                    self.path
                )));
            }
        };
        match event {
            Event::Inputs {
                episode,
                step,
                answers,
                swaps,
            } => {
                let i = self.inputs.entry((episode, step)).or_default();
                i.answers.extend(answers);
                i.swaps.extend(swaps);
                self.seen = self.seen.max((episode, step));
            }
            Event::Reset(r) => {
                self.resets.insert(r.episode, r);
                self.seen = self.seen.max((r.episode, 0));
            }
            Event::Snapshot(s) => {
                self.seen = self.seen.max((s.episode, s.step));
                self.seen_snapshot = self.seen_snapshot.max((s.episode, s.step));
                if self.verify {
                    self.snapshots.push_back(s);
                }
            }
        }
        Ok(())
    }

    /// Verifying: reads every snapshot recorded for the state the world is in, and compares it;
    /// true at a difference. The writer puts the inputs it has in before each snapshot, so a
    /// snapshot can come after the inputs of later steps: the reading goes on to a snapshot
    /// past this state (or the end).
    fn verify_now(&mut self, env: &Environment) -> Result<bool, SsxError> {
        if !self.verify {
            return Ok(false);
        }
        let now = (self.episode, env.steps());
        while !self.ended && self.seen_snapshot <= now {
            self.read()?;
        }
        Ok(self.compare(env))
    }

    /// Compares the snapshots read for the state the world is in; true at a difference.
    fn compare(&mut self, env: &Environment) -> bool {
        let now = (self.episode, env.steps());
        while let Some(s) = self.snapshots.front() {
            let at = (s.episode, s.step);
            if at > now {
                break;
            }
            let s = self.snapshots.pop_front().expect("looked at");
            // A snapshot of a step the replay passed (an episode whose reset is not in the
            // file, cut before it) is not compared.
            if at < now {
                continue;
            }
            self.report.checked += 1;
            if let Some(d) = compare(&s, env) {
                self.report.divergence = Some(d);
                return true;
            }
        }
        false
    }
}

impl Drop for Replayer {
    fn drop(&mut self) {
        // Unblocks the reader if the replay stopped before the end.
        drop(self.events.take());
        if let Some(t) = self.reader.take() {
            let _ = t.join();
        }
    }
}

/// The first frame whose recorded pose is not the replay's to the bit.
fn compare(s: &Snapshot, env: &Environment) -> Option<Divergence> {
    let states = env.states();
    for (k, state) in states.iter().enumerate() {
        let t = state.pose.translation.vector;
        let q = state.pose.rotation.quaternion();
        let replayed = [t.x, t.y, t.z, q.i, q.j, q.k, q.w];
        let recorded = s.poses.get(k).copied().unwrap_or([f64::NAN; 7]);
        if recorded.map(f64::to_bits) != replayed.map(f64::to_bits) {
            return Some(Divergence {
                episode: s.episode,
                step: s.step,
                frame: s
                    .frames
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| format!("body {k}")),
                recorded,
                replayed,
            });
        }
    }
    None
}
